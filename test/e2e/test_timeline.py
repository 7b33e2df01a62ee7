"""Issue 24, item 3 (a timeline you can look at): the daemon records each lease grant, drop and
release per GPU and job; `gshare timeline` writes them as a Chrome trace (one track per GPU,
one thread per job, each hold an "X" span) or an SVG drawing; holds of two jobs that take
turns on the fake GPU never overlap; [timeline] keep removes old events, record = false
records none."""
import json
import os
import re
import time
import unittest
import xml.etree.ElementTree as ET

from gshare_e2e import TestCase

KERNELS = 12
KERNEL_MS = 30
QUANTUM = ["--quantum", "250ms"]
SVG = "{http://www.w3.org/2000/svg}"


class TimelineTest(TestCase):
    def timeline(self, *args, rc=0):
        r = self.h.gshare("timeline", *args)
        self.assertEqual((r.returncode, r.stderr), (rc, ""), "timeline %s" % (args,))
        return r.stdout

    def trace(self, *args):
        path = os.path.join(self.h.tmp, "trace.json")
        self.assertEqual(self.timeline("-o", path, *args), "")
        with open(path) as f:
            return json.load(f)

    @staticmethod
    def holds(doc):
        """The trace's lease spans as {tid: [(ts, end)]} and the GPU process ids."""
        gpus = {e["pid"] for e in doc["traceEvents"]
                if e["ph"] == "M" and e["name"] == "process_name"
                and e["args"]["name"].startswith("GPU ")}
        spans = {}
        for e in doc["traceEvents"]:
            if e["ph"] == "X" and e["name"] == "lease":
                spans.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"], e["pid"]))
        return spans, gpus

    def test_timeline_of_two_jobs_taking_turns(self):
        self.h = h = self.harness()
        h.start_daemon()
        start = os.path.join(h.tmp, "start")
        common = ["--kernels", KERNELS, "--kernel-ms", KERNEL_MS, "--start-file", start]
        a = h.start_fake(common, QUANTUM, name="tl-a")
        b = h.start_fake(common, QUANTUM, name="tl-b")
        h.start_together(start, 2)
        h.assert_done(a, KERNELS)
        h.assert_done(b, KERNELS)
        ids = {j["name"]: j["id"] for j in h.queue_jobs().values()}
        ja, jb = ids["tl-a"], ids["tl-b"]

        doc = self.trace()
        spans, gpus = self.holds(doc)
        self.assertEqual(len(gpus), 1, doc)
        self.assertEqual(set(spans), {ja, jb}, "a lease span for each job")
        # Exclusive mode: one job at a time on the GPU, and the lease went back and forth.
        ordered = sorted(s for tid in spans for s in spans[tid])
        for (s0, e0, p0), (s1, e1, p1) in zip(ordered, ordered[1:]):
            self.assertIn(p0, gpus)
            self.assertLessEqual(e0, s1, "holds overlap on the GPU: %s" % ordered)
        self.assertGreaterEqual(len(ordered), 3, "the lease alternated: %s" % ordered)
        owners = [tid for s in ordered for tid in spans if s in spans[tid]]
        self.assertGreaterEqual(sum(1 for x, y in zip(owners, owners[1:]) if x != y), 2)
        threads = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
                   if e["ph"] == "M" and e["name"] == "thread_name"}
        self.assertEqual(threads[ja], "job %d (tl-a)" % ja)
        # Drops are instants on the GPU; each job's start and end on the "jobs" track.
        names = [(e["name"], e["tid"]) for e in doc["traceEvents"] if e["ph"] == "i"]
        self.assertIn("drop", [n for n, _ in names])
        for job in (ja, jb):
            self.assertIn(("job_start", job), names)
            self.assertIn(("job_end", job), names)
        releases = {e["args"]["released"] for e in doc["traceEvents"] if e["ph"] == "X"}
        self.assertIn("dropped", releases)

        # -j: one job's events; stdout by default; an SVG with a rect per hold.
        only_a = json.loads(self.timeline("-j", str(ja)))
        self.assertEqual(set(self.holds(only_a)[0]), {ja})
        svg_path = os.path.join(h.tmp, "gpu.svg")
        self.timeline("-o", svg_path)  # the extension picks the SVG
        root = ET.parse(svg_path).getroot()
        self.assertEqual(root.tag, SVG + "svg")
        rects = [r for r in root.iter(SVG + "rect") if r.get("class") == "lease"]
        self.assertEqual(len(rects), len(ordered))
        self.assertEqual({int(r.get("data-job")) for r in rects}, {ja, jb})
        self.assertEqual(ET.fromstring(self.timeline("--svg", "-j", str(jb))).tag, SVG + "svg")
        # Each job waited for the lease while the other held it: drawn, in the trace too.
        waits = [r for r in root.iter(SVG + "rect") if r.get("class") == "wait"]
        self.assertEqual({int(r.get("data-job")) for r in waits}, {ja, jb})
        self.assertIn("waited for the lease", waits[0].find(SVG + "title").text)
        trace_waits = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"] == "wait"]
        self.assertEqual({e["tid"] for e in trace_waits}, {ja, jb})
        self.assertTrue(all(e["args"]["released"] == "granted" for e in trace_waits),
                        trace_waits)
        # Ticks are round clock times; one legend names the bars and the marks.
        ticks = [t.text for t in root.iter(SVG + "text") if t.get("class") == "tick"]
        self.assertTrue(ticks and all(re.fullmatch(r"\d\d:\d\d:\d\d(\.\d)?", t) for t in ticks),
                        ticks)
        tenths = [round((int(t[:2]) * 3600 + int(t[3:5]) * 60 + float(t[6:])) * 10) for t in ticks]
        step = tenths[1] - tenths[0] if len(tenths) > 1 else 1
        self.assertIn(step, (1, 2, 5, 10, 20, 50, 100, 150, 300), ticks)
        self.assertEqual([t % step for t in tenths], [0] * len(tenths), ticks)
        texts = [t.text for t in root.iter(SVG + "text")]
        for words in ("waiting for the lease", "lease held (a colour per job)", "drop"):
            self.assertIn(words, texts)

        # A window with nothing in it; a time that is not one: exit 2.
        empty = json.loads(self.timeline("-S", "now+1hour"))
        self.assertEqual([e for e in empty["traceEvents"] if e["ph"] != "M"], [])
        h.assert_error_line(h.gshare("timeline", "-S", "last tuesday"), 2, "bad time")
        # A picture format it does not write: refused in one line, nothing written.
        png = os.path.join(h.tmp, "t.png")
        r = h.gshare("timeline", "-o", png)
        h.assert_error_line(r, 2, 'cannot write "%s"' % png)
        self.assertIn("rsvg-convert", r.stderr)
        self.assertFalse(os.path.exists(png))
        h.assert_error_line(h.gshare("timeline", "-j", "x"), 2, "bad job id")

        # Retention at the next start: events older than [timeline] keep go; with recording
        # off the new job leaves none.
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        with open(h.config_path, "a") as f:
            f.write('[timeline]\nkeep = "1s"\nrecord = false\n')
        time.sleep(1.2)
        h.start_daemon()
        c = h.start_fake(["--kernels", 2, "--kernel-ms", 10], name="tl-c")
        h.assert_done(c, 2)
        r = h.gshare("timeline", "-o", "-", "-S", "2000-01-01")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("records no events", r.stderr)
        events = [e for e in json.loads(r.stdout)["traceEvents"] if e["ph"] != "M"]
        self.assertEqual(events, [])


if __name__ == "__main__":
    unittest.main()
