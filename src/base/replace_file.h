// ReplaceFile: a small file written whole or not at all. The text goes into `<path>.tmp`, made
// afresh (a file or link left there is removed first; O_EXCL | O_NOFOLLOW refuse one that
// appears meanwhile), which is then renamed over `path`: a reader, or the next start after a
// crash, finds the old content or the new, never a part. Any thread; two writers of one path
// at once are the caller's to avoid.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace gshare {

// Errors: "cannot write <path>: <errno text>" (the temporary file is removed).
Status ReplaceFile(const std::string& path, const std::string& text, mode_t mode = 0600);

}  // namespace gshare
