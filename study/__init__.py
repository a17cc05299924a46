"""The code that runs studies: many models (seeds × settings) trained and analysed in parallel on Ray, and the
findings across them. (Study folders, the results, go under studies/ by default: ignored by git.)

    plan.py      what to run: the seeds, the grid of settings, one RunSpec per (seed, setting), its folder name
    tasks.py     what one Ray task does: train a run (or find it trained), analyse a checkpoint into tidy tables
    runner.py    the driver: Ray in-process (or a cluster by address), tasks submitted and watched, progress,
                 failures reported without stopping the others, the per-run tables joined into study tables
    findings.py  across runs: intervals over seeds, heads matched by role, stability of importance

A study folder (Ray Tune's layout): study.json (the plan), status.json (live progress), runs/<name>/ (params.json,
checkpoint/, tables/*.csv, done.json), tables/*.csv (every run's rows with run, seed and setting columns).
A task gets a run's settings and a reference to the CSV's bytes and returns paths and small summaries; nothing
else crosses the wire.
"""
