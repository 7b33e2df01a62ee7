// Clang thread-safety annotations (clang's ThreadSafetyAnalysis): what each lock guards and
// which functions need it held, checked by scripts/check_thread_safety.sh with
// -Wthread-safety. Under any other compiler (the shim is built with g++) they expand to
// nothing. Macros only; usable from any thread and in unsafe contexts.
#pragma once

#if defined(__clang__)
#define GSHARE_TSA(x) __attribute__((x))
#else
#define GSHARE_TSA(x)
#endif

// A type whose objects are locks ("mutex" names the kind in diagnostics).
#define CAPABILITY(name) GSHARE_TSA(capability(name))
// An RAII type that holds a lock from its constructor to its destructor.
#define SCOPED_CAPABILITY GSHARE_TSA(scoped_lockable)
// A member or global read and written only with `mu` held.
#define GUARDED_BY(mu) GSHARE_TSA(guarded_by(mu))
// A pointer whose pointee is read and written only with `mu` held (the pointer itself is not).
#define PT_GUARDED_BY(mu) GSHARE_TSA(pt_guarded_by(mu))
// The caller must hold the lock(s) when it calls the function.
#define REQUIRES(...) GSHARE_TSA(requires_capability(__VA_ARGS__))
// The function takes the lock(s) and returns with them held.
#define ACQUIRE(...) GSHARE_TSA(acquire_capability(__VA_ARGS__))
// The function gives back lock(s) the caller held (none named: the object itself).
#define RELEASE(...) GSHARE_TSA(release_capability(__VA_ARGS__))
// The function takes the lock(s) when it returns `ok` (true, or a non-null pointer).
#define TRY_ACQUIRE(...) GSHARE_TSA(try_acquire_capability(__VA_ARGS__))
// The caller must not hold the lock(s): the function takes them itself.
#define EXCLUDES(...) GSHARE_TSA(locks_excluded(__VA_ARGS__))
// The function returns a reference to the lock `mu`.
#define RETURN_CAPABILITY(mu) GSHARE_TSA(lock_returned(mu))
// Turns the analysis off for one function the analysis cannot follow (a lock taken in one
// function and released in another, or held across a callback). Say why at each use.
#define NO_THREAD_SAFETY_ANALYSIS GSHARE_TSA(no_thread_safety_analysis)
