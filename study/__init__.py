"""The code that runs studies: many models (seeds × settings) trained and analysed in parallel on Ray, and the
findings across them. (Study folders, the results, go under studies/ by default: ignored by git.)

    plan.py        what to run: the seeds, the grid of settings, one RunSpec per (seed, setting), its folder name
    ray_session.py which Ray: a local one of the study's own (loopback, token, 0600 token file) or a cluster joined
                   on purpose (its token checked first)
    tasks.py       what one Ray task does, in memory: train and analyse a run, or analyse a checkpoint it is given;
                   it returns the files, never writes the driver's disk
    folder.py      the study folder on the driver's disk: atomic writes, what a run holds (checked), stop requests
    runner.py      the driver: tasks submitted in a bounded window, results brought home and written, retries of
                   lost tasks, progress, stop, resume
    status.py      where a study stands: status.json, the console line, `cli.py study --status`
    tables.py      the per-run tables joined run by run (flat memory)
    findings.py    across runs: intervals over seeds, heads matched by role, stability of importance

A study folder (Ray Tune's layout): study.json (the plan), status.json (live progress), runs/<name>/ (params.json,
checkpoint/, train.json, log.txt, tables/*.csv), tables/*.csv (every run's rows with run, seed and setting columns),
findings.json. Only the driver writes it: a cluster's nodes need no shared file system.
"""
