#!/usr/bin/env python3
"""PyTorch's sharing of CUDA tensors between processes (torch.multiprocessing), which is legacy
CUDA IPC at the driver level: the sender's cudaIpcGetMemHandle of the caching allocator's
segment, the receiver's cudaIpcOpenMemHandle. Under gshare's swap engine the segment is VMM
memory and the handle is gshare's (docs/memory.md, "Legacy IPC of engine memory").

    python3 test/gpu/ipc_share.py                      # bare
    gshare run -- python3 test/gpu/ipc_share.py        # under gshare (swap engine)

For each size (4 KiB inside a 2 MiB segment, 3 MiB, 300 MiB: several of the engine's 64 MiB
chunks) the parent fills a tensor with a known sequence and sends it to a spawned child; the
child checks the sum, doubles the tensor in place and answers; the parent checks that it reads
the doubled values. Output: `ipc_share: bytes <n> child_sum ok parent_sees ok` per size, then
`ipc_share: done`; exit 1 on a mismatch or an error (one line), also when the tensor cannot be
sent at all (under `--memory managed`: no answer within ANSWER_S). Cost: a few seconds (two imports
of torch).
"""
import queue
import sys

import torch
import torch.multiprocessing as mp

SIZES = [4 << 10, 3 << 20, 300 << 20]
ANSWER_S = 30  # the child answers in well under a second once it has the tensor


def child(inbox, outbox):
    torch.cuda.init()
    while True:
        t = inbox.get()
        if t is None:
            return
        n = t.numel()
        want = float(n) * (n - 1) / 2  # sum of 0 .. n-1, exact in float64 at these sizes
        got = float(t.double().sum().item())
        t.mul_(2)
        torch.cuda.synchronize()
        outbox.put((got == want, got))
        del t


def main():
    mp.set_start_method("spawn")
    inbox, outbox = mp.Queue(), mp.Queue()
    p = mp.Process(target=child, args=(inbox, outbox))
    p.start()
    ok = True
    try:
        for size in SIZES:
            n = size // 4
            t = torch.arange(n, dtype=torch.float32, device="cuda")
            torch.cuda.synchronize()
            inbox.put(t)
            try:
                # A tensor that cannot be shared fails in the queue's feeder thread, which
                # only prints its error: nothing reaches the child.
                child_ok, got = outbox.get(timeout=ANSWER_S)
            except queue.Empty:
                raise RuntimeError(f"no answer from the child in {ANSWER_S} s: the tensor of "
                                   f"{size} bytes was not sent (see the error above)") from None
            seen = bool(torch.equal(t, torch.arange(n, dtype=torch.float32, device="cuda") * 2))
            print(f"ipc_share: bytes {size} child_sum {'ok' if child_ok else 'BAD ' + str(got)} "
                  f"parent_sees {'ok' if seen else 'BAD'}", flush=True)
            ok = ok and child_ok and seen
    except Exception as e:  # noqa: BLE001 - one line
        print(f"ipc_share: error: {type(e).__name__}: {' '.join(str(e).split())}", flush=True)
        ok = False
    inbox.put(None)
    p.join(60)
    ok = ok and p.exitcode == 0
    print("ipc_share: done" if ok else "ipc_share: FAILED", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
