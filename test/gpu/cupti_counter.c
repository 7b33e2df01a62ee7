/* cupti_counter: the census's independent count of CUDA driver API calls.
 *
 * Preloaded next to libgshare.so (LD_PRELOAD=libcupti_counter.so before `gshare run`), it subscribes
 * to CUPTI's callback API for the whole driver domain and counts every driver API call at
 * API_ENTER by CUpti_CallbackData.functionName. CUPTI's callbacks fire inside the driver's own
 * entry points, so a call is counted whatever route reached it: an exported cu* symbol, dlsym, or
 * a pointer from cuGetProcAddress (cudart, static cudart, Triton, XLA, CuPy ...). It shares no code
 * or state with the shim.
 *
 * At exit (atexit and a destructor, whichever runs first) it writes `<functionName> <count>` lines,
 * after one `# cupti_counter ...` header line, to $GSHARE_CUPTI_OUT.<pid>. A process that made no
 * driver call and had no error writes nothing (compiler and shell children of a job stay silent).
 *
 * Without GSHARE_CUPTI_OUT it does nothing. GSHARE_CUPTI_VERBOSE=1 reports a failed subscription on
 * stderr too (it is always in the file's header). It can also be loaded by the driver itself with
 * CUDA_INJECTION64_PATH=libcupti_counter.so (InitializeInjection below): then only processes that
 * call cuInit load it, and it subscribes inside cuInit (calls before that are not submissions).
 *
 * Threads: the callback runs on every thread that calls the driver; the table is lock-free
 * (CAS on the name slot, relaxed fetch_add on the count). A fork child starts from zero.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define kSlots 2048 /* power of two; the driver domain has ~800 callback ids */

typedef struct {
  _Atomic(const char *) name; /* CUPTI's functionName: a pointer to a global constant string */
  atomic_ullong count;
} Slot;

static Slot g_table[kSlots];
static atomic_ullong g_overflow;  /* calls that found no free slot (never expected) */
static atomic_ullong g_null_name; /* callbacks without a functionName */
static atomic_int g_started;      /* Start() ran (once per process) */
static atomic_int g_written;      /* WriteCounts() ran (once per process) */
static int g_subscribed;          /* cuptiSubscribe + cuptiEnableDomain succeeded */
static int g_error;               /* the failing CUptiResult, 0 if none */
static const char *g_error_where = "";
static CUpti_SubscriberHandle g_subscriber;

static uint64_t HashName(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; ++s) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void CountName(const char *name) {
  uint64_t h = HashName(name);
  for (unsigned i = 0; i < kSlots; ++i) {
    Slot *slot = &g_table[(h + i) & (kSlots - 1)];
    const char *cur = atomic_load_explicit(&slot->name, memory_order_acquire);
    if (cur == NULL) {
      const char *expected = NULL;
      if (atomic_compare_exchange_strong(&slot->name, &expected, name)) {
        cur = name;
      } else {
        cur = expected; /* another thread claimed it first */
      }
    }
    /* Same pointer is the common case; compare text too in case CUPTI ever hands out copies. */
    if (cur == name || strcmp(cur, name) == 0) {
      atomic_fetch_add_explicit(&slot->count, 1, memory_order_relaxed);
      return;
    }
  }
  atomic_fetch_add_explicit(&g_overflow, 1, memory_order_relaxed);
}

static void CUPTIAPI OnCallback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void *cbdata) {
  (void)userdata;
  (void)cbid;
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbdata == NULL) return;
  const CUpti_CallbackData *data = (const CUpti_CallbackData *)cbdata;
  if (data->callbackSite != CUPTI_API_ENTER) return;
  if (data->functionName == NULL) {
    atomic_fetch_add_explicit(&g_null_name, 1, memory_order_relaxed);
    return;
  }
  CountName(data->functionName);
}

static void WriteCounts(void) {
  if (atomic_exchange(&g_written, 1)) return;
  if (!atomic_load(&g_started)) return;
  const char *base = getenv("GSHARE_CUPTI_OUT");
  if (base == NULL || base[0] == '\0') return;
  unsigned long long total = 0;
  for (unsigned i = 0; i < kSlots; ++i) total += atomic_load(&g_table[i].count);
  if (total == 0 && g_error == 0 && atomic_load(&g_overflow) == 0) return;

  char path[4096];
  int n = snprintf(path, sizeof path, "%s.%d", base, (int)getpid());
  if (n <= 0 || (size_t)n >= sizeof path) return;
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "cupti_counter: cannot write %s\n", path);
    return;
  }
  fprintf(f, "# cupti_counter pid=%d subscribed=%d error=%d where=%s overflow=%llu null_name=%llu total=%llu\n",
          (int)getpid(), g_subscribed, g_error, g_error_where, (unsigned long long)atomic_load(&g_overflow),
          (unsigned long long)atomic_load(&g_null_name), total);
  for (unsigned i = 0; i < kSlots; ++i) {
    const char *name = atomic_load(&g_table[i].name);
    unsigned long long c = atomic_load(&g_table[i].count);
    if (name != NULL && c > 0) fprintf(f, "%s %llu\n", name, c);
  }
  fclose(f);
}

/* In a fork child the table holds the parent's counts: start over, so no call is counted twice.
 * (CUDA itself is unusable in a fork child; only a child that execs or stays off the GPU is fine.) */
static void OnForkChild(void) {
  for (unsigned i = 0; i < kSlots; ++i) {
    atomic_store(&g_table[i].count, 0);
  }
  atomic_store(&g_overflow, 0);
  atomic_store(&g_null_name, 0);
  atomic_store(&g_written, 0);
}

static void Start(void) {
  if (atomic_exchange(&g_started, 1)) return;
  const char *base = getenv("GSHARE_CUPTI_OUT");
  if (base == NULL || base[0] == '\0') return;
  pthread_atfork(NULL, NULL, OnForkChild);
  atexit(WriteCounts);
  CUptiResult r = cuptiSubscribe(&g_subscriber, (CUpti_CallbackFunc)OnCallback, NULL);
  if (r != CUPTI_SUCCESS) {
    g_error = (int)r;
    g_error_where = "cuptiSubscribe";
  } else {
    r = cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    if (r != CUPTI_SUCCESS) {
      g_error = (int)r;
      g_error_where = "cuptiEnableDomain";
    } else {
      g_subscribed = 1;
    }
  }
  /* The failure is in the output file's header; say it on stderr only when asked, since every
   * process of the job (shells, compilers) runs this and the job's stderr is the user's. */
  if (g_error != 0 && getenv("GSHARE_CUPTI_VERBOSE") != NULL) {
    const char *msg = "?";
    cuptiGetResultString((CUptiResult)g_error, &msg);
    fprintf(stderr, "cupti_counter: %s failed: %d (%s); this process is not counted\n", g_error_where,
            g_error, msg);
  }
}

/* LD_PRELOAD route: subscribe before main, so cuInit and everything after it is seen. */
__attribute__((constructor)) static void CounterInit(void) {
  /* Loaded by the driver (CUDA_INJECTION64_PATH names this library): leave the subscription to
   * InitializeInjection, which the driver calls next; subscribing from a constructor that runs
   * inside cuInit's dlopen is asking for a loader-lock deadlock. */
  const char *inj = getenv("CUDA_INJECTION64_PATH");
  if (inj != NULL && strstr(inj, "cupti_counter") != NULL) return;
  Start();
}

__attribute__((destructor)) static void CounterFini(void) { WriteCounts(); }

/* CUDA_INJECTION64_PATH route: the driver calls this from cuInit. */
__attribute__((visibility("default"))) int InitializeInjection(void) {
  Start();
  return 1;
}
