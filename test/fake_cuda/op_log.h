// The fake's clock and op log. Every op a stream executes appends one line to $FAKE_CUDA_LOG:
//   <kind> <pid> <start_ns> <end_ns> <export_name>[@sm<N>] <device>\n
// CLOCK_MONOTONIC; kind K G C S H O, P for checkpoint transitions; device the physical index
// of the op's context at the time it ran (driver.h), -1 for P lines (the whole process).
// written with one write(2) on an O_APPEND fd, so lines of many processes never interleave.
// Any thread: OpenOpLog runs once inside cuInit, LogOp from the stream workers.
#pragma once

#include <cstdint>

namespace gs_cuda::fake {

// CLOCK_MONOTONIC in nanoseconds.
uint64_t NowNs();

// Sleeps until NowNs() >= deadline_ns, resuming after signals.
void SleepUntilNs(uint64_t deadline_ns);

// Opens $FAKE_CUDA_LOG for appending (created 0644) when set. Returns false only when it is
// set and cannot be opened; then nothing is logged.
bool OpenOpLog();

// Appends one line; does nothing without a log. Never fails loudly: a short write is dropped.
// `sms` > 0 (an op of a green context's stream) appends "@sm<sms>" to the name.
void LogOp(char kind, uint64_t start_ns, uint64_t end_ns, const char* name, int device,
           unsigned sms = 0);

}  // namespace gs_cuda::fake
