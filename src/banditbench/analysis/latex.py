"""LaTeX tables: escaping, and the one ``table`` environment every ``.tex`` result is written as.

:func:`escape` turns any text — an algorithm or experiment label, a caption, a cell — into LaTeX that
prints it: the ten special characters ``# $ % & ~ ^ _ { } \\`` (and ``< > |``, which the default OT1
font encoding prints as other glyphs) become their commands in one pass, so that no replacement is
escaped again; the symbols the tables write (``±``, ``−``, ``†``, dashes, quotes, Greek letters) become
their commands, so that the file compiles with pdfLaTeX as well as with XeLaTeX or LuaLaTeX.  Other
characters are left as they are (UTF-8, LaTeX's default input encoding).

:func:`table` writes a ``table`` float with a ``booktabs`` ``tabular`` (``\\toprule``, ``\\midrule``,
``\\bottomrule``: the preamble needs ``\\usepackage{booktabs}``), escaping every header, cell and the
caption unless given as :class:`Tex` (LaTeX already, e.g. a bold cell), and labelling it
(:func:`label`: ``tab:`` and the parts, lower case, every run of other characters than ``a-z 0-9`` one ``-``).
:func:`name` writes a display name (``plot.names``), its ``$ ... $`` mathtext as math.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Sequence

#: the characters LaTeX treats specially, and what prints each
SPECIAL = {
    "\\": r"\textbackslash{}",
    "#": r"\#",
    "$": r"\$",
    "%": r"\%",
    "&": r"\&",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
#: symbols the tables and captions hold, as commands every LaTeX engine knows
SYMBOLS = {
    "±": r"$\pm$",
    "−": r"$-$",
    "†": r"$\dagger$",
    "‡": r"$\ddagger$",
    "×": r"$\times$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "≈": r"$\approx$",
    "·": r"$\cdot$",
    "°": r"$^\circ$",
    "∞": r"$\infty$",
    "–": "--",
    "—": "---",
    "…": r"\ldots{}",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
    "\u00a0": "~",
    "\u200b": "",
}
#: Greek capitals that LaTeX has commands for
_GREEK_CAPITALS = {"Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"}
#: the others, which look like Latin capitals
_GREEK_AS_LATIN = {
    "Alpha": "A", "Beta": "B", "Epsilon": "E", "Zeta": "Z", "Eta": "H", "Iota": "I", "Kappa": "K", "Mu": "M",
    "Nu": "N", "Omicron": "O", "Rho": "P", "Tau": "T", "Chi": "X",
}  # fmt: skip


def _greek(ch: str) -> str | None:
    """A Greek letter as LaTeX (``θ`` -> ``$\\theta$``, ``Α`` -> ``A``), else None."""
    name = unicodedata.name(ch, "")
    for prefix in ("GREEK SMALL LETTER ", "GREEK CAPITAL LETTER "):
        if not name.startswith(prefix):
            continue
        letter = name[len(prefix) :].lower().replace("lamda", "lambda")
        if prefix.startswith("GREEK CAPITAL"):
            letter = letter.capitalize()
            if letter in _GREEK_CAPITALS:
                return "$\\" + letter + "$"
            return _GREEK_AS_LATIN.get(letter)
        if letter == "final sigma":
            return r"$\varsigma$"
        if letter == "omicron":
            return "o"
        return "$\\" + letter + "$" if letter.isalpha() else None
    return None


def escape(text: object, dagger: str = r"$\dagger$") -> str:
    """``text`` as LaTeX that prints it (module docstring); ``dagger``: what ``†`` becomes (a cell's mark
    is a superscript, ``$^\\dagger$``)."""
    out = []
    for ch in str(text):
        if ch in SPECIAL:
            out.append(SPECIAL[ch])
        elif ch == "†":
            out.append(dagger)
        elif ch in SYMBOLS:
            out.append(SYMBOLS[ch])
        elif ch in "\n\r\t":
            out.append(" ")
        elif ord(ch) > 0x36F and (greek := _greek(ch)) is not None:
            out.append(greek)
        else:
            out.append(ch)
    return "".join(out)


class Tex(str):
    """Text that is LaTeX already: :func:`table` writes it as it is."""


def name(text: object) -> Tex:
    """A display name as LaTeX: with an even number of unescaped ``$`` (matplotlib's mathtext) the
    text between them as math, the rest escaped (``\\$`` a dollar sign); else all of it escaped."""
    parts = re.split(r"(?<!\\)\$", str(text))
    if len(parts) < 3 or len(parts) % 2 == 0:
        return Tex(escape(text))
    return Tex("".join(f"${p}$" if i % 2 else escape(p.replace("\\$", "$")) for i, p in enumerate(parts)))


def label(*parts: object) -> str:
    """A ``\\label`` key: ``tab:`` and the non-empty ``parts`` joined by ``-``, each lower case with every
    run of characters other than ``a-z 0-9`` one ``-`` (``tab:default-exp-cumulative-regret``)."""
    slugs = (re.sub(r"[^a-z0-9]+", "-", str(p).lower()).strip("-") for p in parts)
    return "tab:" + "-".join(s for s in slugs if s)


def _tex(value: object, dagger: str) -> str:
    """``value`` as LaTeX: a :class:`Tex` as it is, a missing value (None, NaN) empty, else escaped."""
    if isinstance(value, Tex):
        return value
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return escape(value, dagger)


def table(
    caption: object,
    head: Sequence[object],
    body: Iterable[Sequence[object]],
    align: str,
    cell_dagger: str = r"$^\dagger$",
    key: str | None = None,
) -> str:
    """A ``table`` float: ``caption`` and ``\\label{key}`` (:func:`label`) when given, then a ``tabular``
    of column spec ``align`` with the header row ``head`` and the rows ``body``, every entry escaped
    (:func:`escape`; ``†`` in cells as ``cell_dagger``) unless a :class:`Tex`."""
    caption = _tex(caption, SYMBOLS["†"])
    rows = [" & ".join(_tex(h, cell_dagger) for h in head) + r" \\ \midrule"]
    rows += [" & ".join(_tex(c, cell_dagger) for c in row) + r" \\" for row in body]
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{caption}}}",
            *([rf"\label{{{key}}}"] if key else []),
            rf"\begin{{tabular}}{{{align}}}",
            r"\toprule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    )
