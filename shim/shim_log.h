// Messages from the shim to the job's stderr, safe in any context (constructor, atfork
// handlers, dlsym hook): no heap, no stdio locks, no logger; one write(2) per line and
// errno kept. Any thread.
#pragma once

#include <errno.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace gshare::shim {

// Writes "gshare: <formatted>\n" to fd 2 in one write(2). Lines are cut at 512 bytes.
__attribute__((format(printf, 1, 2))) inline void Warn(const char* fmt, ...) {
  int saved = errno;
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, "gshare: ");
  va_list ap;
  va_start(ap, fmt);
  int m = std::vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
  va_end(ap);
  if (m < 0) m = 0;
  n += m;
  if (n > static_cast<int>(sizeof buf) - 2) n = sizeof buf - 2;
  buf[n++] = '\n';
  ssize_t ignored = write(2, buf, n);
  (void)ignored;
  errno = saved;
}

}  // namespace gshare::shim
