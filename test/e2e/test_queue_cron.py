"""The batch queue's headline case: a shell script run as cron runs it (`env -i` with only
PATH and HOME, no terminal, no XDG_RUNTIME_DIR, no GSHARE_* variable) submits 100 jobs with
random priorities and a dependency chain; an interactive shell of the same user then sees
every one of them, releases them, and they run in the documented order: priority first, then
submission order, a dependent job only after the job it depends on completed."""
import os
import random
import subprocess
import unittest

from gshare_e2e import GSHARE, MARKER, TestCase, _read

# 100 jobs in all: each one costs a sanitized job supervisor in CI.
N_FREE = 90  # jobs without a dependency
N_CHAIN = 10  # jobs each --dependency afterok:<the previous one>


def simulate(jobs):
    """The start order docs/cli.md ("Admission") prescribes with max_running = 1 for jobs
    all released at once: repeatedly the eligible job of the highest priority, then the
    earliest submitted. jobs: dicts with id, priority, index (submission order), after (the
    id it depends on with afterok, or None)."""
    done, order, left = set(), [], list(jobs)
    while left:
        eligible = [j for j in left if j["after"] is None or j["after"] in done]
        nxt = min(eligible, key=lambda j: (-j["priority"], j["index"]))
        order.append(nxt["id"])
        done.add(nxt["id"])
        left.remove(nxt)
    return order


class QueueCronTest(TestCase):
    def test_cron_submits_100_jobs(self):
        h = self.harness()
        home = os.path.join(h.tmp, "home")
        # How cron and the interactive shell meet at one daemon. Neither gets GSHARE_SOCKET
        # nor GSHARE_STATE_DIR. The state directory comes from HOME alone
        # (~/.local/state/gshare, src/base/config.cc StateDir). The socket, by include/gshare/paths.h,
        # would be /run/user/<uid>/gshare/gshare.sock (where logind gives the shell its
        # XDG_RUNTIME_DIR) else /tmp/gshare-<uid>/gshare.sock; both are one per user for the
        # whole machine, shared with other tests and with a developer's own daemon, and the
        # test cannot create /run/user/<uid> for itself. So the user's config file, which both
        # find through HOME (~/.config/gshare/gshare.toml, no --config on the cron line),
        # names the socket, as a user with no logind session would do. The interactive
        # shell keeps a different XDG_RUNTIME_DIR (the harness's) to show it does not matter.
        os.makedirs(os.path.join(home, ".config", "gshare"))
        sock = os.path.join(home, "run", "gshare.sock")
        os.makedirs(os.path.dirname(sock), 0o700)  # not the standard runtime dir: never created
        with open(os.path.join(home, ".config", "gshare", "gshare.toml"), "w") as f:
            f.write('[daemon]\nsocket = "%s"\n[queue]\nmax_running = 1\ngpus = 1\n' % sock)
        state_dir = os.path.join(home, ".local", "state", "gshare")
        h.daemon_log = os.path.join(state_dir, "daemon.log")  # for diagnostics()

        interactive = {k: v for k, v in h.env.items()
                       if not k.startswith("GSHARE_") and k not in ("XDG_CONFIG_HOME", "XDG_STATE_HOME")}
        interactive["HOME"] = home
        self.addCleanup(lambda: h.gshare("daemon", "stop", config=False, env=interactive, timeout=30))

        def g(*args, **kw):
            return h.gshare(*args, config=False, env=interactive, **kw)

        # The jobs, in submission order: the chain's jobs at random places among the others.
        rng = random.Random(20240611)
        chain_at = sorted(rng.sample(range(N_FREE + N_CHAIN), N_CHAIN))
        order_file = os.path.join(h.tmp, "order")
        submits = os.path.join(h.tmp, "submits")
        job_cmd = "sh -c 'echo $GSHARE_JOB_ID >> %s'" % order_file
        lines = [
            "#!/bin/sh",
            "# As cron runs it: no terminal, PATH=/usr/bin:/bin and HOME only.",
            "G=%s" % GSHARE,
            "D=%s" % submits,
            "mkdir -p \"$D\"",
            "n=0",
            "sub() {",
            "  n=$((n+1))",
            "  \"$G\" submit \"$@\" >\"$D/$n.out\" 2>\"$D/$n.err\"",
            "  echo $? >\"$D/$n.rc\"",
            "}",
        ]
        plan = []  # per submission: priority, chain position or None
        link = 0
        for i in range(N_FREE + N_CHAIN):
            prio = rng.randint(-3, 3)  # few values: many ties, decided by submission order
            if i in chain_at:
                dep = " -d afterok:$prev" if link > 0 else ""
                lines.append("sub -H -p %d -J chain%d%s -- %s" % (prio, link, dep, job_cmd))
                lines.append("prev=$(cat \"$D/$n.out\")")
                plan.append((prio, link))
                link += 1
            else:
                lines.append("sub -H -p %d -J free%d -- %s" % (prio, i, job_cmd))
                plan.append((prio, None))
        script = os.path.join(h.tmp, "cron.sh")
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(script, 0o755)

        # MARKER only lets the harness's cleanup find what this script started.
        r = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "HOME=" + home,
                            "%s=%s" % (MARKER, h.tmp), script],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=240, cwd="/", start_new_session=True)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

        jobs, prev_id = [], None
        for n in range(1, N_FREE + N_CHAIN + 1):
            out = _read(os.path.join(submits, "%d.out" % n))
            err = _read(os.path.join(submits, "%d.err" % n))
            rc = _read(os.path.join(submits, "%d.rc" % n)).strip()
            self.assertEqual((rc, err), ("0", ""), "submission %d" % n)
            self.assertRegex(out, r"\A[0-9]+\n\Z", "submission %d must print only its id" % n)
            prio, link = plan[n - 1]
            jid = int(out)
            jobs.append({"id": jid, "priority": prio, "index": n,
                         "after": prev_id if link not in (None, 0) else None, "link": link})
            if link is not None:
                prev_id = jid
        ids = [j["id"] for j in jobs]
        self.assertEqual(len(set(ids)), len(ids), "job ids must be unique")
        self.assertTrue(os.path.exists(os.path.join(state_dir, "gshare.db")),
                        "the database is not where HOME puts it")

        # The interactive shell sees all of them, held, listed in their start order.
        def all_held():
            q = h.queue_jobs(config=False, env=interactive)
            if set(q) == set(ids) and all(j["state"] == "PENDING" and j["reason"] == "JobHeldUser"
                                          for j in q.values()):
                return q
            return None
        q = h.wait_for(all_held, 60, "every held job in the interactive shell's queue")
        by_id = {j["id"]: j for j in jobs}
        for jid, rec in q.items():
            self.assertEqual(rec["priority"], by_id[jid]["priority"], "job %d" % jid)
            self.assertTrue(rec["held"])
            self.assertEqual(rec["kind"], "submit")
        listed = list(q)
        self.assertEqual(listed, sorted(ids, key=lambda i: (-by_id[i]["priority"], by_id[i]["index"])),
                         "pending jobs must be listed in the order they would start")
        chain = [j for j in jobs if j["link"] is not None]
        for a, b in zip(chain, chain[1:]):
            self.assertEqual(q[b["id"]]["dependency"], "afterok:%d" % a["id"])

        # All released at once, so that admission order is deterministic.
        r = g("release", *map(str, ids))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        r = g("wait", *map(str, ids), timeout=240)
        self.assertEqual(r.returncode, 0, "gshare wait: %s\n%s" % (r.stderr, h.diagnostics()))
        q = h.queue_jobs(config=False, env=interactive)
        states = {jid: q[jid]["state"] for jid in ids}
        self.assertEqual([i for i in ids if states[i] != "COMPLETED"], [], states)
        self.assertTrue(all(q[i]["exit_code"] == 0 for i in ids))
        spans = sorted((q[i]["start_time"], q[i]["end_time"], i) for i in ids)
        for a, b in zip(spans, spans[1:]):
            self.assertLessEqual(a[1], b[0], "jobs %d and %d ran at once with max_running = 1" % (a[2], b[2]))

        ran = [int(x) for x in _read(order_file).split()]
        self.assertEqual(sorted(ran), sorted(ids), "every job must run exactly once")
        chain_ids = [j["id"] for j in chain]
        self.assertEqual([i for i in ran if i in chain_ids], chain_ids, "the chain ran out of order")
        self.assertEqual(ran, simulate(jobs), "start order is not priority, then submission order")


if __name__ == "__main__":
    unittest.main()
