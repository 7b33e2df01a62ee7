"""The step loop and the result line of the bench's batch trainings (prio_train.py: GPT-2,
share_cnn.py: ResNet-50), which differ only in their model, optimizer and data.

Each step: loss_of(step) under torch.autocast(bfloat16) (the forward and loss), backward,
optimizer step, zero_grad, loss.item() (which waits for the GPU), then one line
`<step> <time.time()> <loss>` appended to the log (steps from 1; the loss with 9 significant
digits), flushed. The result, printed as one JSON line on stdout:
  {"kind": "train", **extra, "steps": n, "seconds": <first step's start to last step's end>,
   "steps_per_s", "last_loss", "peak_gib": torch.cuda.max_memory_reserved() / 2**30}
with "stopped": "signal" when SIGTERM or SIGINT ended it after the current step.
"""
import json
import os
import signal
import sys
import time


def stop_on_signals():
    """A list that SIGTERM and SIGINT append to from now on: the loop ends at the step's end."""
    stop = []

    def on_signal(signum, _frame):
        stop.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def wait_for_go(ready_file, go_file, stop):
    """Creates `ready_file`, then waits (polling every 10 ms) until `go_file` exists and writes
    `go <epoch>` on stderr; returns False when SIGTERM or SIGINT (`stop`) came first. The
    caller has made no CUDA call yet: its arrival at the GPU is put at a chosen moment, apart
    from its CPU start-up."""
    open(ready_file, "w").close()
    while not os.path.exists(go_file):
        if stop:
            return False
        time.sleep(0.01)
    print(f"go {time.time():.6f}", file=sys.stderr, flush=True)
    return True


def train(torch, opt, loss_of, steps, log_path, stop, extra=None, out=print):
    """Runs up to `steps` steps (fewer once `stop` is not empty), then prints the result line
    with `out`; returns the result."""
    log = open(log_path, "a", buffering=1) if log_path else None
    done = 0
    last = None
    t_first = None
    t_last = time.time()
    for step in range(1, steps + 1):
        if stop:
            break
        if t_first is None:
            t_first = time.time()
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = loss_of(step)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        last = loss.item()
        t_last = time.time()
        done = step
        if log:
            log.write(f"{step} {t_last:.6f} {last:.9g}\n")
    if log:
        log.close()

    seconds = t_last - t_first if t_first is not None else 0.0
    result = {"kind": "train", **(extra or {}), "steps": done, "seconds": round(seconds, 3),
              "steps_per_s": round(done / seconds, 4) if seconds > 0 else 0.0,
              "last_loss": last,
              "peak_gib": round(torch.cuda.max_memory_reserved() / 2**30, 3)}
    if stop:
        result["stopped"] = "signal"
    out(json.dumps(result), flush=True)
    return result


def selftest():
    """Checks the loop on a made-up torch; returns the count (run by benchlib.py selftest)."""
    import contextlib
    import os
    import tempfile
    from types import SimpleNamespace

    calls = []

    class Loss:
        def __init__(self, v):
            self.v = v

        def backward(self):
            calls.append("backward")

        def item(self):
            return self.v

    fake = SimpleNamespace(autocast=lambda **_: contextlib.nullcontext(), bfloat16=None,
                           cuda=SimpleNamespace(max_memory_reserved=lambda: 3 * 2**30))
    opt = SimpleNamespace(step=lambda: calls.append("step"),
                          zero_grad=lambda set_to_none: calls.append("zero"))
    lines = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "log")
        r = train(fake, opt, lambda s: Loss(1.0 / s), 3, path, [], {"model": "m"},
                  out=lambda text, flush: lines.append(text))
        logged = open(path).read().splitlines()
    assert r["steps"] == 3 and r["last_loss"] == 1.0 / 3 and r["model"] == "m", r
    assert r["peak_gib"] == 3.0 and "stopped" not in r, r
    assert calls == ["backward", "step", "zero"] * 3, calls
    assert [x.split()[0] for x in logged] == ["1", "2", "3"] and logged[2].endswith(" 0.333333333")
    assert json.loads(lines[0]) == r, lines
    stop = []
    r = train(fake, opt, lambda s: stop.append(s) or Loss(2.0), 5, "", stop,
              out=lambda text, flush: None)
    assert r["steps"] == 1 and r["stopped"] == "signal", "a signal ends the loop after its step"
    return 1
