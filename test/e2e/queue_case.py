"""The queue tests' common case (test_queue_control.py, test_job_options.py): a harness whose
queue runs one job at a time, so that order is observable, and helpers for its jobs."""
import os

from gshare_e2e import TestCase, _read

QUEUE = {"max_running": 1, "gpus": 1}  # one job at a time: order is observable


class QueueCase(TestCase):
    """A harness whose queue runs one job at a time (QUEUE), with helpers for jobs that wait
    for a file, append to one, and their states and ends."""
    def setUp(self):
        self.h = self.harness(queue=QUEUE)

    def path(self, name):
        return os.path.join(self.h.tmp, name)

    def wait_file(self, name, timeout=30, text=None):
        """Waits until file `name` of the temp dir exists (and contains text)."""
        p = self.path(name)
        return self.h.wait_for(lambda: os.path.exists(p) and (text is None or text in _read(p)),
                               timeout, "file %s%s" % (name, "" if text is None else " to hold %r" % text))

    def blocker(self, name="blocker"):
        """Submits a job that runs until file <name>.go exists; returns (id, release)."""
        go = self.path(name + ".go")
        jid = self.h.submit("-J", name, "--", "sh", "-c", "while [ ! -e %s ]; do sleep 0.05; done" % go)
        self.h.wait_state(jid, "RUNNING")
        return jid, lambda: open(go, "w").close()

    def appender(self, log, *opts):
        """Submits a job that appends its id to file `log`; returns the id."""
        return self.h.submit(*opts, "--", "sh", "-c", "echo $GSHARE_JOB_ID >> %s" % self.path(log))

    def lines(self, name):
        return _read(self.path(name)).split()

    def state(self, jid):
        return self.h.queue_jobs()[jid]

    def wait_rc(self, *ids, timeout=60):
        r = self.h.gshare("wait", *map(str, ids), timeout=timeout)
        self.assertEqual(r.stdout, "")
        return r.returncode
