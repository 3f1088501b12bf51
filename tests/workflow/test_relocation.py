"""Moving or copying a finished project re-runs nothing, and an override then runs exactly its new jobs
(issue 35): no job parameter or input holds an absolute path of the project."""

import shutil

import pytest

from smk import copy_project, planned, smk

TINY = {
    "seeds": None,
    "horizon": None,
    "experiments": {
        "duel": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
            "horizon": 30,
            "seeds": 2,
            "seeds_per_job": 1,
            "table_horizons": [30],
            "algorithms": {"ldb_df": {"policy": "ldb_df"}, "random": {"policy": "random_pair"}},
            "delays": {"none": {"kind": "none"}},
        }
    },
}


@pytest.mark.slow
def test_a_copied_finished_project_reruns_nothing_and_an_override_runs_only_its_variant(tmp_path):
    first = tmp_path / "first"
    first.mkdir()
    copy_project(first, TINY)
    run = smk(first, "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    moved = tmp_path / "elsewhere" / "moved"
    shutil.copytree(first, moved, symlinks=True)  # as cp -a: modification times kept
    again = smk(moved, "-n")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stdout + again.stderr, (again.stdout + again.stderr)[-3000:]
    variant = smk(moved, "-n", "--config", "override=ldb_df.beta=2")
    assert variant.returncode == 0, variant.stderr[-3000:]
    jobs = planned(variant.stdout + variant.stderr)
    simulate = {rule: n for rule, n in jobs.items() if rule.startswith("simulate")}
    assert sum(simulate.values()) == 2, jobs  # the variant's two seeds, nothing of what exists
    # the original project is untouched by the copy's plans and still complete
    assert "Nothing to be done" in (lambda r: r.stdout + r.stderr)(smk(first, "-n"))
