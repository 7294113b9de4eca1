"""The contract's start-up line, "iobound-runtime {json}": the CPUs this process may run on (its
affinity; os.cpu_count() is the machine's, which is what gunicorn's advice of 2 x CPUs + 1 reads)
and how the server was sized. Each worker process prints it once it starts; iobound reads the
last."""

import json
import os
import sys


def runtime_line(workers, workers_of, **more):
    report = {
        "language": "python",
        "python_version": sys.version.split()[0],
        "cpus": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "workers": workers,
        "workers_of": workers_of,
        **more,
    }
    return "iobound-runtime " + json.dumps(report)


def processes():
    """Worker processes of this server, as the harness told it (IOBOUND_WORKERS)."""
    return int(os.environ.get("IOBOUND_WORKERS") or 1)
