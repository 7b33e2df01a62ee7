"""Two Unix users' swapping jobs under one `gshare daemon --system` (docs/memory.md, "Pinned host
pool"): each user's job gets its own user's host pool, never the other's. Users made with
useradd; the jobs are `gshare run --memory swap` in cron's bare environment, on one fake GPU whose
memory both share (FAKE_CUDA_DEVICE_FILE), so their memory adds up to more than it and they take
turns, each evicted into host memory. Both pools are memory files from the daemon; the test
reads, as root, which file each job's process maps.

Needs root (CI runs as root)."""
import os
import shutil
import time
import unittest

from gshare_e2e import FAKE_APP, fake_app_of, host_pool_files
from system_case import SystemDaemonCase

USERS = ("gshpoola", "gshpoolb")
MIB = 1 << 20
DEVICE = 256 * MIB  # two 150 MiB jobs do not fit together


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class HostPoolUsersTest(SystemDaemonCase):
    def setUp(self):
        self.setup_system(USERS, '[scheduler]\nsharing = "auto"\n'
                          '[memory]\ncontext_reserve = "1MiB"\n')
        self.a, self.b = self.users
        self.device = self.shared_device_file()

    def start_job(self, user, name):
        fake = {"FAKE_CUDA_DEVICE_FILE": self.device, "FAKE_CUDA_MEM_BYTES": str(DEVICE),
                "FAKE_CUDA_KERNEL_MS": "20"}
        # A quantum of the job's own: the user's config, empty, would leave the default.
        return self.start_as_user(user, "run", "-J", name, "--quantum", "500ms", "--memory",
                                  "swap", "--", FAKE_APP, "--kernels", "0", "--swap-check",
                                  150 * MIB, "--cycles", "30", "--gap-ms", "30", extra_env=fake)

    def test_each_users_jobs_swap_into_their_own_users_pool(self):
        self.start_system()
        jobs = {u.pw_name: self.start_job(u, "pool-" + u.pw_name) for u in self.users}
        pools = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and len(pools) < 2:
            for u in self.users:
                pid = fake_app_of(u.pw_uid)
                files = host_pool_files(pid) if pid else set()
                if files:
                    pools[u.pw_name] = files
            time.sleep(0.1)
        self.assertEqual(len(pools), 2, "not both jobs mapped a host pool: %s\n%s" % (
            pools, self.log()))
        a, b = (pools[u.pw_name] for u in self.users)
        self.assertEqual(len(a), 1, pools)
        self.assertEqual(len(b), 1, pools)
        self.assertNotEqual(a, b, "two users' jobs share one host pool")
        for name, p in jobs.items():
            out, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, "%s: %s\n%s\n%s" % (name, out, err, self.log()))
            self.assertIn("fake_app: swap-check ok cycles=30", out)


if __name__ == "__main__":
    unittest.main()
