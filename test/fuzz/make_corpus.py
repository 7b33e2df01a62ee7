#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (corpus/<target>/): requests as the CLI and the
shim send them (src/cli/cmd_run.cc, cmd_submit.cc, cmd_control.cc, job_supervisor.cc, the shim's
binary messages of include/gshare/protocol.h), option text, batch scripts and configs.
Rerun after a protocol change: python3 test/fuzz/make_corpus.py"""
import json
import os
import re
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
with open(os.path.join(ROOT, "include", "gshare", "protocol.h")) as f:
    VERSION = int(re.search(r"kVersion = (\d+);", f.read()).group(1))
MAGIC = 0x52485347
T = dict(hello=1, lease_request=2, lease_released=3, mem_report=4, gap_report=5,
         run_register=32, run_started=33, run_ended=34, status=35, scheduler=36, shutdown=37,
         submit=38, control=39, clean=40, attach=41)

OPTIONS = {"name": "train", "argv": ["python3", "train.py", "--epochs", "3"], "cwd": "/home/u/exp",
           "priority": 0, "quantum_ms": 20000, "gpu": "", "time_limit_ms": 0,
           "kill_after_ms": 30000, "dependency": "", "held": False, "begin_time": None,
           "output": "", "memory": "swap"}


def dump(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def frame(type_, payload):
    return struct.pack("<IHHII", MAGIC, VERSION, T[type_], len(payload), 0) + payload


def lease(gpu=b"\x11" * 16, epoch=0, nbytes=0, reason=0, ordinal=0):
    return struct.pack("<16sQQIi", gpu, epoch, nbytes, reason, ordinal)


def requests():
    """(name, JSON payload bytes, type) of every CLI request."""
    run = dict(OPTIONS, pid=4242)
    submit = dict(OPTIONS, name="nightly", held=True, dependency="afterok:3:4,afterany:5",
                  begin_time=1790003600.0, time_limit_ms=5400000, output="%x-%j.out",
                  env=["HOME=/home/u", "PATH=/usr/bin:/bin", "CUDA_VISIBLE_DEVICES=0"],
                  script="#!/bin/sh\n#GSHARE -J nightly\npython3 train.py\n")
    return [
        ("run_register", dump(run), "run_register"),
        ("run_register_after", dump(dict(run, dependency="afterok:7", memory="off", gpu="0")), "run_register"),
        ("submit", dump(submit), "submit"),
        ("submit_no_script", dump(dict(submit, script=None, held=False, begin_time=None)), "submit"),
        ("run_started", dump({"job_id": 12, "pid": 4243}), "run_started"),
        ("run_ended_exit", dump({"job_id": 12, "exit_code": 0, "signal": None, "timed_out": False}), "run_ended"),
        ("run_ended_signal", dump({"job_id": 12, "exit_code": None, "signal": 9, "timed_out": True}), "run_ended"),
        ("run_ended_error", dump({"job_id": 12, "exit_code": 127, "signal": None, "timed_out": False,
                                  "error": "cannot run python4: No such file or directory"}), "run_ended"),
        ("status_all", b"{}", "status"),
        ("status_one", dump({"job_id": 12}), "status"),
        ("scheduler_off", dump({"enabled": False}), "scheduler"),
        ("shutdown", b"{}", "shutdown"),
        ("cancel", dump({"action": "cancel", "ids": [3, 4]}), "control"),
        ("signal", dump({"action": "signal", "ids": [3], "signal": 10}), "control"),
        ("set_priority", dump({"action": "set-priority", "ids": [3], "priority": -5}), "control"),
        ("hold", dump({"action": "hold", "ids": [6]}), "control"),
        ("clean", dump({"older_than_ms": 86400000}), "clean"),
        ("attach", dump({"job_id": 12}), "attach"),
    ]


def attach_replies():
    """What a supervisor reads back for kRunAttach (src/ipc/replies.h RunAttachReply)."""
    files = "/var/lib/gshare/files/1000"
    reply = {"ok": True, "argv": ["/home/u/.gshare/job.sh"], "env": ["HOME=/home/u", "PATH=/usr/bin:/bin"],
             "set_env": {"GSHARE_JOB_ID": "12", "GSHARE_JOB_TOKEN": "tok"},
             "preload": ["/usr/lib/gshare/libgshare.so"], "cwd": "/home/u", "output": "/home/u/nightly-12.out",
             "error": "", "open_append": False, "warn_signal": 10, "warn_ms": 60000,
             "warn_main_only": False, "time_limit_ms": 5400000, "kill_after_ms": 30000,
             "script": "#!/bin/sh\npython3 train.py\n", "script_path": files + "/scripts/12",
             "end_path": files + "/ends/12", "start_path": files + "/starts/12"}
    return [("attach_reply", dump(reply)),
            ("attach_reply_no_script", dump(dict(reply, script=None, preload=[])))]


def shim_frames():
    hello = struct.pack("<QiI16s", 12, 4243, 0, b"\x5a" * 16)
    mem = struct.pack("<16siI" + "Q" * 14 + "IIQ", b"\x11" * 16, 0, 1, 80 << 30, 2 << 30, 2 << 30,
                      0, 0, 1 << 30, 3, 2, 3 << 30, 2 << 30, 12345678, 7, 1000, 1 << 20, 1, 0,
                      1 << 30)
    gap = struct.pack("<16sqqiI", b"\x11" * 16, 1_000_000_000, 1_050_000_000, 0, 0)
    conversation = (frame("hello", hello) + frame("lease_request", lease()) +
                    frame("mem_report", mem) + frame("gap_report", gap) +
                    frame("lease_released", lease(epoch=3, reason=1)))
    return [("shim_hello", frame("hello", hello)),
            ("shim_lease_request", frame("lease_request", lease())),
            ("shim_mem_report", frame("mem_report", mem)),
            ("shim_conversation", conversation)]


def write(target, files):
    d = os.path.join(HERE, "corpus", target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in files:
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def main():
    reqs = requests()
    # fuzz_frame: the first byte picks the chunk size (bit 7: a 64-byte payload limit).
    frames = [(n, frame(t, p)) for n, p, t in reqs] + shim_frames()
    write("frame", [(n, bytes([i * 7 % 64]) + data) for i, (n, data) in enumerate(frames)] +
          [("client_conversation", b"\x03" + frame("run_register", reqs[0][1]) +
            frame("run_started", reqs[4][1]) + frame("run_ended", reqs[5][1]))])
    write("request", [(n, p) for n, p, t in reqs if t in ("run_register", "submit", "run_ended")] +
          attach_replies())
    texts = {0: ["20s", "500ms", "1h30m", "1.5s", "90", "1-02:03:04", "05:30"],
             1: ["90", "1.5", "10:00", "2-12", "1h30m", "UNLIMITED", "0"],
             2: ["now+1h", "now+90s", "now+2hours", "22:00", "2026-12-01T08:00:30", "tomorrow",
                 "teatime", "@1790000000.5"],
             3: ["24GiB", "1.5G", "64MB", "512K", "123"],
             4: ["50%", "768MiB"],
             5: ["afterok:1:2,afterany:3", "afternotok:7", "AfterAny:4:4"],
             6: ["1,2,3", "42"]}
    write("option_text", [("%d_%d" % (sel, i), bytes([sel]) + t.encode())
                          for sel, items in texts.items() for i, t in enumerate(items)])
    write("script", [
        ("directives", b"#!/usr/bin/env python3\n#GSHARE -J scripted -p 7\n# an ordinary comment\n"
                       b"#GSHARE -o %x-%j.txt --env FROM_SCRIPT=yes\n#GSHARE --env BOTH=script\n"
                       b"import os, sys\n#GSHARE -p 99\nprint(sys.argv)\n"),
        ("every_option", b"#!/bin/sh\n#GSHARE --name 'my job' --priority=-3 --quantum 500ms\n"
                         b"#GSHARE --gpu 0 --time 1:30:00 --kill-after 10s --memory off\n"
                         b"#GSHARE --dependency afterok:1:2,afterany:3 --hold\n"
                         b"#GSHARE --begin now+1h -D /tmp -o \"out %j.txt\" --env A=\\$B\r\n"
                         b"#GSHARE --after 4,5 # a comment\n\necho hi\n"),
        ("plain", b"#GSHARE -J plain\necho \"sh $1\"\n"),
    ])
    with open(os.path.join(ROOT, "configs", "gshare.toml"), "rb") as f:
        shipped = f.read()
    write("config", [
        ("shipped", shipped),
        ("e2e", b'[scheduler]\nenabled = true\nquantum = "20s"\nidle_release = "500ms"\n'
                b'drop_grace = "10s"\ndefault_priority = 0\nsharing = "exclusive"\n'
                b"[queue]\nmax_running = 1\ngpus = 2\n"),
        ("memory", b'[memory]\nengine = "managed"\nhost_budget = "16GiB"\ngpu_limit = "70GiB"\n'
                   b'context_reserve = "512MiB"\n[daemon]\nlog_level = "debug"\n'
                   b'state_dir = "~/gs"\nsocket = "/tmp/gs.sock"\n'),
    ])


if __name__ == "__main__":
    main()
