"""Issue 24, item 6 (sweeps and scripts): job arrays (--array with a %N limit, the
GSHARE_ARRAY_* variables, %A/%a in output patterns, cancel of the array's id, one task named
as Slurm's J_T in hold/update/set-priority/status/cancel/wait/logs), `submit
SCRIPT` reading its #GSHARE lines, --wrap, and `queue --format` / `-l`."""
import os
import time
import unittest

from gshare_e2e import TestCase, _read

QUEUE = {"max_running": 4, "gpus": 1}  # room for every task: only %N holds them back

# Writes what a task sees, then runs until <dir>/go exists.
TASK = ('echo "$GSHARE_ARRAY_JOB_ID $GSHARE_ARRAY_TASK_ID $GSHARE_ARRAY_TASK_COUNT '
        '$GSHARE_ARRAY_TASK_MIN $GSHARE_ARRAY_TASK_MAX $GSHARE_JOB_ID"; '
        'while [ ! -e %s ]; do sleep 0.05; done')


class ArraysTest(TestCase):
    def setUp(self):
        self.h = self.harness(queue=QUEUE)
        self.work = os.path.join(self.h.tmp, "work")
        os.mkdir(self.work)

    def path(self, name):
        return os.path.join(self.work, name)

    def write(self, name, text, mode=0o644):
        with open(self.path(name), "w") as f:
            f.write(text)
        os.chmod(self.path(name), mode)

    def tasks(self, array_id):
        """The tasks of array `array_id` from `queue -a --json`, by task id."""
        return {j["array_task_id"]: j for j in self.h.queue_jobs().values()
                if j["array_job_id"] == array_id}

    def test_array_of_four_runs_two_at_a_time_with_its_variables_and_files(self):
        h = self.h
        go = self.path("go")
        array = h.submit("--array=0-6:2%2", "-J", "sweep", "-o", self.path("%x-%A_%a.out"),
                         "--", "sh", "-c", TASK % go)
        tasks = self.tasks(array)
        self.assertEqual(sorted(tasks), [0, 2, 4, 6])
        self.assertEqual(tasks[0]["id"], array)  # the array's id is its first task's
        ids = sorted(t["id"] for t in tasks.values())
        self.assertEqual(ids, list(range(array, array + 4)))
        for t in tasks.values():
            self.assertEqual((t["array_task_count"], t["array_task_min"], t["array_task_max"],
                              t["array_limit"], t["name"]), (4, 0, 6, 2, "sweep"))
        h.wait_for(lambda: sum(t["state"] == "RUNNING" for t in self.tasks(array).values()) == 2,
                   20, "two tasks running")
        # Slots are free (max_running 4), yet the limit holds the others back.
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            states = [t["state"] for t in self.tasks(array).values()]
            self.assertEqual(states.count("RUNNING"), 2, states)
        waiting = [t for t in self.tasks(array).values() if t["state"] == "PENDING"]
        self.assertEqual([t["reason"] for t in waiting], ["JobArrayTaskLimit"] * 2)
        open(go, "w").close()
        # Two running was seen above; the tasks now end quickly, so a sample may see fewer.
        while True:
            states = [t["state"] for t in self.tasks(array).values()]
            self.assertLessEqual(states.count("RUNNING"), 2, states)
            if all(s == "COMPLETED" for s in states):
                break
            time.sleep(0.02)
        for task, t in self.tasks(array).items():
            out = _read(self.path("sweep-%d_%d.out" % (array, task)))
            self.assertEqual(out, "%d %d 4 0 6 %d\n" % (array, task, t["id"]))

    def test_submit_script_reads_directives_without_dot_slash(self):
        h = self.h
        self.write("job.sh", "#!/bin/sh\n#GSHARE -J scripted --array=0-1\n"
                             "#GSHARE -o out-%A_%a.txt\n"
                             '[ "$GSHARE_ARRAY_TASK_ID" = 1 ] && sleep 0.5\n'
                             'echo "task $GSHARE_ARRAY_TASK_ID of $GSHARE_ARRAY_JOB_ID: $1"\n')
        array = h.submit("job.sh", "hello", cwd=self.work)  # not executable, no ./
        # The array's id waits for every task, the slower one too.
        self.assertEqual(h.gshare("wait", str(array)).returncode, 0)
        tasks = self.tasks(array)
        self.assertEqual(sorted(tasks), [0, 1])
        self.assertEqual({t["state"] for t in tasks.values()}, {"COMPLETED"})
        self.assertEqual({t["name"] for t in tasks.values()}, {"scripted"})
        for task in (0, 1):
            self.assertEqual(_read(self.path("out-%d_%d.txt" % (array, task))),
                             "task %d of %d: hello\n" % (task, array))
        # With a path, a #! script's lines apply too; the command line wins over them.
        self.write("named.sh", "#!/bin/sh\n#GSHARE -J from-script -p 3\necho named\n", 0o755)
        job = h.submit("-J", "from-cli", self.path("named.sh"), cwd=self.work)
        self.assertEqual(h.gshare("wait", str(job)).returncode, 0)
        record = h.queue_jobs()[job]
        self.assertEqual((record["name"], record["priority"]), ("from-cli", 3))
        self.assertIsNone(record["array_task_id"])
        # A script without #! run through a path is a command, as before: no directives.
        self.write("plain.sh", "#GSHARE -J ignored\necho plain\n", 0o755)
        job = h.submit(self.path("plain.sh"), cwd=self.work)
        self.assertEqual(h.gshare("wait", str(job)).returncode, 0)
        self.assertEqual(h.queue_jobs()[job]["name"], "plain.sh")

    def test_wrap_and_bad_array_specs(self):
        h = self.h
        job = h.submit("--wrap", "echo wrapped $((1 + 2)) > %s" % self.path("w.txt"))
        self.assertEqual(h.gshare("wait", str(job)).returncode, 0)
        self.assertEqual(_read(self.path("w.txt")), "wrapped 3\n")
        record = h.queue_jobs()[job]
        self.assertEqual((record["name"], record["argv"][:2]), ("wrap", ["/bin/sh", "-c"]))
        h.assert_error_line(h.gshare("submit", "--wrap", "true", "--", "echo"), 2, "--wrap")
        for spec, why in (("5-1", "ends before it begins"), ("a-b", "is not a number"),
                          ("0-9%0", "at least 1"), ("0-10000", "at most 10000")):
            h.assert_error_line(h.gshare("submit", "--array", spec, "--", "true"), 2, why)
        self.write("bad.sh", "#!/bin/sh\n#GSHARE --array=3-1\ntrue\n")
        h.assert_error_line(h.gshare("submit", "bad.sh", cwd=self.work), 2, "ends before it begins")
        self.assertEqual(len(h.queue_jobs()), 1)  # none of them queued anything

    def test_queue_format_long_form_and_cancel_of_the_array(self):
        h = self.h
        go = self.path("go")
        name = "resnet50-imagenet-lr0.001-wd1e-4"  # 32 characters
        array = h.submit("--array=0-2%1", "-J", name, "--", "sh", "-c", TASK % go)
        h.wait_state(array, "RUNNING")
        r = h.gshare("queue", "--format=jobid,jobarrayid,name,command")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["ID", "ARRAY", "NAME", "COMMAND"])
        self.assertEqual(len(lines), 4)
        for task, line in enumerate(lines[1:]):
            self.assertEqual(line.split()[:5], [str(array + task), "%d_%d" % (array, task), name,
                                                "sh", "-c"])
        r = h.gshare("queue", "-l", "--no-header")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 3)
        self.assertIn("%d_0" % array, r.stdout)
        self.assertIn(name + "  ", r.stdout)  # whole
        self.assertIn("sh -c 'echo ", r.stdout)
        r = h.gshare("queue")  # the default table: 24 characters of the name
        self.assertIn(name[:23] + "\u2026", r.stdout)
        self.assertNotIn(name, r.stdout)
        h.assert_error_line(h.gshare("queue", "--format=jobid,bogus"), 2, 'unknown field "bogus"')
        # The array's id holds its pending tasks (not the running one)...
        r = h.gshare("hold", str(array))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        held = {t["array_task_id"]: t["held"] for t in self.tasks(array).values()}
        self.assertEqual(held, {0: False, 1: True, 2: True})
        # ...and cancels the running task and the pending ones.
        self.assertEqual(h.gshare("cancel", str(array)).returncode, 0)
        for task in self.tasks(array).values():
            h.wait_state(task["id"], "CANCELLED")
        self.assertEqual(len(self.tasks(array)), 3)

    def test_array_tasks_named_j_t_wherever_a_job_id_goes(self):
        # Slurm's J_T names one task: the first task's id is also the array's, yet 48_0 is
        # that task alone, while 48 stands for every task a command applies to.
        h = self.h
        go = self.path("go")
        array = h.submit("--array=0-3%1", "-J", "jt", "-o", self.path("%A_%a.out"), "--",
                         "sh", "-c", TASK % go)
        h.wait_state(array, "RUNNING")
        ids = {task: t["id"] for task, t in self.tasks(array).items()}
        # hold J_2 holds task 2 only; update and set-priority reach J_3.
        r = h.gshare("hold", "%d_2" % array)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        held = {t: rec["held"] for t, rec in self.tasks(array).items()}
        self.assertEqual(held, {0: False, 1: False, 2: True, 3: False})
        self.assertEqual(h.gshare("update", "%d_3" % array, "-J", "third").returncode, 0)
        self.assertEqual(h.gshare("set-priority", "%d_3" % array, "7").returncode, 0)
        t3 = self.tasks(array)[3]
        self.assertEqual((t3["name"], t3["priority"]), ("third", 7))
        # status J_T is that task's record.
        r = h.gshare("status", "%d_1" % array)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("JobId=%d" % ids[1], r.stdout)
        # cancel J_0: the running first task alone, though its id is the array's.
        r = h.gshare("cancel", "%d_0" % array)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        h.wait_state(ids[0], "CANCELLED")
        h.wait_state(ids[3], "RUNNING")  # the %1 limit lets the next one start: priority 7
        states = {t: rec["state"] for t, rec in self.tasks(array).items()}
        self.assertEqual(states, {0: "CANCELLED", 1: "PENDING", 2: "PENDING", 3: "RUNNING"})
        # wait and logs take J_T too.
        open(go, "w").close()
        r = h.gshare("wait", "%d_3" % array, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = h.gshare("logs", "%d_3" % array)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("%d 3 4 0 3 %d" % (array, ids[3]), r.stdout)
        # A task the array does not have; a malformed one is bad usage, sent nowhere.
        h.assert_error_line(h.gshare("cancel", "%d_9" % array), 1,
                            "no task 9 in job array %d" % array)
        h.assert_error_line(h.gshare("cancel", "%d_x" % array), 2, 'bad job id "%d_x"' % array)
        self.assertEqual(self.tasks(array)[2]["state"], "PENDING")  # still held
        self.assertEqual(h.gshare("cancel", str(array)).returncode, 0)

    def test_queue_selects_as_squeue_does(self):
        # -j IDS (an array's id: its tasks; J_T: one task; any state), -n a,b, --me, -i.
        h = self.h
        go = self.path("go")
        array = h.submit("--array=0-2%1", "-J", "sel", "--", "sh", "-c", TASK % go)
        other = h.submit("-H", "-J", "other", "--", "true")
        third = h.submit("-H", "-J", "third", "--", "true")

        def ids(*args):
            r = h.gshare("queue", "--no-header", "-O", "jobid", *args)
            self.assertEqual(r.returncode, 0, r.stderr)
            return sorted(int(x) for x in r.stdout.split())
        tasks = sorted(t["id"] for t in self.tasks(array).values())
        self.assertEqual(ids("-j", str(array)), tasks)
        self.assertEqual(ids("-j", "%d_1,%d" % (array, other)), sorted([tasks[1], other]))
        self.assertEqual(ids("-n", "other,third"), [other, third])
        self.assertEqual(ids("--me"), sorted(tasks + [other, third]))
        self.assertEqual(ids("--me", "-n", "sel"), tasks)
        h.assert_error_line(h.gshare("queue", "-j", "%d_7" % array), 1, "no task 7")
        h.assert_error_line(h.gshare("queue", "-j", "x"), 2, 'bad job id "x"')
        # -i: a dated table again and again until interrupted.
        watcher = h.start(h.gshare_argv("queue", "-i", "0.2", "-n", "other"), name="iterate")
        h.wait_for(lambda: watcher.stdout.count("other") >= 3, 30, "three tables")
        watcher.proc.terminate()
        watcher.wait(10)
        tables = watcher.stdout.split("\n\n")
        self.assertGreaterEqual(len(tables), 3, watcher.stdout)
        self.assertRegex(tables[0], r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\nID ")
        open(go, "w").close()
        self.assertEqual(h.gshare("cancel", str(other), str(third)).returncode, 0)
        self.assertEqual(h.gshare("wait", str(array), timeout=60).returncode, 0)


if __name__ == "__main__":
    unittest.main()
