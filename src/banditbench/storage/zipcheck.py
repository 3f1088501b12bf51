"""A strict check of the layout of the zip (``.npz``) files banditbench writes.

Python's :mod:`zipfile` finds a member through the central directory and checks its data
against the CRC-32 stored there, but it ignores most of the member's local header (its
version, times, CRC and sizes), the end record's counts and anything between members.
A damaged byte there leaves the file readable, so it would go unnoticed.  The files
banditbench writes (results, prepared data, oracles: :func:`numpy.savez` and
:func:`banditbench.storage.resultio.save_result`) all have one plain layout, which
:func:`check_layout` verifies:

* the members lie back to back from offset 0, in the central directory's order, and
  the central directory follows the last one, and the end record follows it, ending the file
  (no comment, no prepended or appended bytes, a single disk);
* each local header says what its central-directory entry says (version, flags,
  compression, time, CRC, sizes, name; a ``zip64`` size record counts as the sizes),
  with no data descriptor;
* each entry has no comment, disk number 0, internal attributes 0, and is "made by" the
  version that is needed to extract it, on MS-DOS or Unix.

Together with zipfile's CRC check of every member read (and a result's sha256), every
byte of such a file is checked but the four bytes of external attributes (file
permissions for extracting it to disk) of each member, which nothing reads.  Files of
more than 4 GiB (a ``zip64`` end record) are not checked here.
"""

from __future__ import annotations

import struct
import zlib
from typing import BinaryIO, NamedTuple
from zipfile import BadZipFile

_END = struct.Struct("<4s4H2LH")  # end of central directory record (22 bytes)
_CENTRAL = struct.Struct("<4s4B4HL2L5HLL")  # central directory entry (46 bytes)
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # local file header (30 bytes)
_MAX32, _MAX16 = 0xFFFFFFFF, 0xFFFF
_DATA_DESCRIPTOR, _UTF8 = 0x08, 0x800


class Entry(NamedTuple):
    """A member as :func:`check_layout` found it."""

    name: str
    method: int
    crc: int
    compressed_size: int
    size: int
    data_offset: int


def _split_extra(extra: bytes) -> tuple[tuple[int, ...], bytes]:
    """The values of the zip64 record (tag 1) of an extra field, and the other records."""
    values: tuple[int, ...] = ()
    rest, pos = b"", 0
    while pos < len(extra):
        if pos + 4 > len(extra):
            raise BadZipFile("malformed extra field")
        tag, size = struct.unpack_from("<HH", extra, pos)
        if pos + 4 + size > len(extra):
            raise BadZipFile("malformed extra field")
        if tag == 1:
            if size % 8:
                raise BadZipFile("malformed zip64 record")
            values = struct.unpack_from(f"<{size // 8}Q", extra, pos + 4)
        else:
            rest += extra[pos : pos + 4 + size]
        pos += 4 + size
    return values, rest


def _sizes(csize: int, usize: int, zip64: tuple[int, ...], offset: int | None = None) -> tuple[int, ...]:
    """The sizes (and offset) of an entry, those saturated at 2**32 - 1 read from its zip64 record in order."""
    fields = [usize, csize] + ([] if offset is None else [offset])
    values = list(zip64)
    out = []
    for value in fields:
        if value == _MAX32:
            if not values:
                raise BadZipFile("zip64 record missing")
            value = values.pop(0)
        out.append(value)
    usize, csize, *rest = out
    return (csize, usize, *rest)


def _end_record(fh: BinaryIO, size: int) -> tuple[int, int, int] | None:
    """The end record's entry count and the central directory's size and offset, the record checked;
    ``None`` for a zip64 end record (over 4 GiB: not checked here)."""
    if size < _END.size:
        raise BadZipFile(f"{size} bytes: too short for a zip file")
    fh.seek(size - _END.size)
    sig, disk, disk_cd, here, total, cd_size, cd_offset, comment = _END.unpack(fh.read(_END.size))
    if sig != b"PK\x05\x06":
        raise BadZipFile("no end-of-central-directory record at the end of the file (truncated or appended to?)")
    if _MAX32 in (cd_size, cd_offset) or _MAX16 in (here, total):
        return None
    if (disk, disk_cd, comment) != (0, 0, 0) or here != total:
        raise BadZipFile(f"end record garbled (disks {disk}/{disk_cd}, entries {here}/{total}, comment {comment})")
    if cd_offset + cd_size != size - _END.size:
        raise BadZipFile(
            f"central directory at {cd_offset} of {cd_size} bytes does not end where the end "
            f"record starts ({size - _END.size})"
        )
    return total, cd_size, cd_offset


def _check_local_header(
    fh: BinaryIO, what: str, entry: bytes, name: bytes, rest: bytes, offset: int, sizes: tuple[int, int]
) -> int:
    """Check the local header at ``offset`` against its central-directory ``entry`` (its ``name``, extra
    records other than zip64 ``rest``, and (compressed, uncompressed) ``sizes``); returns where its data starts."""
    fh.seek(offset)
    local = fh.read(_LOCAL.size)
    if len(local) != _LOCAL.size or local[:4] != b"PK\x03\x04":
        raise BadZipFile(f"local header of {what}: bad signature")
    _, lcsize, lusize, lname_len, lextra_len = struct.unpack("<L2L2H", local[14:])
    lname = fh.read(lname_len)
    lzip64, lrest = _split_extra(fh.read(lextra_len))
    # version, flags, compression, time, date and CRC: the same bytes in both headers
    if local[4:18] != entry[6:20] or lname != name or lrest != rest or _sizes(lcsize, lusize, lzip64) != sizes:
        raise BadZipFile(f"local header of {what} disagrees with the central directory")
    return offset + _LOCAL.size + lname_len + lextra_len


def check_layout(fh: BinaryIO, size: int) -> list[Entry] | None:
    """Check the layout of the zip file open as ``fh`` (``size`` bytes); a :class:`zipfile.BadZipFile`
    says what is wrong.  Returns its members, or ``None`` for a file with a zip64 end record (not checked)."""
    end = _end_record(fh, size)
    if end is None:
        return None  # a zip64 end record (over 4 GiB): not checked here
    total, cd_size, cd_offset = end
    fh.seek(cd_offset)
    directory = fh.read(cd_size)
    pos = expected = 0
    entries = []
    for index in range(total):
        if pos + _CENTRAL.size > len(directory):
            raise BadZipFile(f"central directory holds fewer than the {total} entries its end record counts")
        entry = directory[pos : pos + _CENTRAL.size]
        (
            sig,
            made_by,
            system,
            needed,
            _,
            flags,
            method,
            _,
            _,
            crc,
            csize,
            usize,
            name_len,
            extra_len,
            comment_len,
            disk_start,
            internal,
            _,
            offset,
        ) = _CENTRAL.unpack(entry)
        name = directory[pos + _CENTRAL.size : pos + _CENTRAL.size + name_len]
        extra = directory[pos + _CENTRAL.size + name_len : pos + _CENTRAL.size + name_len + extra_len]
        pos += _CENTRAL.size + name_len + extra_len + comment_len
        what = f"entry {index} ({name.decode('utf-8', 'replace')!r})"
        if sig != b"PK\x01\x02":
            raise BadZipFile(f"central directory {what}: bad signature")
        if (
            (comment_len, disk_start, internal) != (0, 0, 0)
            or made_by != needed
            or system not in (0, 3)
            or flags & _DATA_DESCRIPTOR
            or pos > len(directory)
        ):
            raise BadZipFile(f"central directory {what} garbled")
        zip64, rest = _split_extra(extra)
        csize, usize, offset = _sizes(csize, usize, zip64, offset)
        if offset != expected:
            raise BadZipFile(f"{what} starts at {offset}, not at {expected} where the previous member ends")
        data_offset = _check_local_header(fh, what, entry, name, rest, offset, (csize, usize))
        entries.append(
            Entry(name.decode("utf-8" if flags & _UTF8 else "cp437"), method, crc, csize, usize, data_offset)
        )
        expected = data_offset + csize
    if pos != len(directory):
        raise BadZipFile(f"central directory holds more than the {total} entries its end record counts")
    if expected != cd_offset:
        raise BadZipFile(f"the members end at {expected}, not where the central directory starts ({cd_offset})")
    return entries


def read_member(fh: BinaryIO, entry: Entry) -> bytes:
    """The content of a member found by :func:`check_layout`, checked: its size and CRC-32 and, compressed,
    that its data is one whole deflate stream (zipfile does not check its end: a damaged last byte can
    go unnoticed)."""
    fh.seek(entry.data_offset)
    raw = fh.read(entry.compressed_size)
    if len(raw) != entry.compressed_size:
        raise BadZipFile(f"member {entry.name!r} truncated")
    if entry.method == 0:
        data = raw
    elif entry.method == 8:
        inflate = zlib.decompressobj(-15)
        data = inflate.decompress(raw, entry.size + 1)
        if not inflate.eof or inflate.unused_data or inflate.unconsumed_tail:
            raise BadZipFile(f"compressed data of member {entry.name!r} does not end where its size says")
    else:
        raise BadZipFile(
            f"member {entry.name!r}: compression method {entry.method}, neither stored nor deflated "
            f"(banditbench writes no other)"
        )
    if len(data) != entry.size or zlib.crc32(data) != entry.crc:
        raise BadZipFile(f"bad size or CRC-32 of member {entry.name!r}")
    return data
