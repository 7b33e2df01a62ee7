// The options that a batch script carries in "#GSHARE" lines, read as sbatch(1) reads #SBATCH
// lines ("The batch script may contain options preceded with #SBATCH before any executable
// commands"). Pure function of its argument: any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace gshare {

// Returns the option tokens of `script`'s directive lines, in order. A directive line starts,
// in its first column, with "#GSHARE" then a blank or the line's end ("#GSHAREX" and
// "# GSHARE" are ordinary comments). Only lines before the first command line count: a
// command line is one that is neither blank nor, after leading blanks, a comment (so the
// "#!" line is skipped). Lines end at "\n"; a "\r" before it is dropped.
// The rest of a directive line is split into words as sh(1) splits them, without any
// expansion: blanks separate; '...' is literal; in "..." a backslash escapes only " \ $ `;
// outside quotes a backslash escapes the next character; a '#' that starts a word starts a
// comment to the end of the line; '' or "" give an empty word.
// On failure (a quote not closed, or a backslash at the end of the line, since directives do
// not continue onto the next line) returns an error whose one-line message names the line.
Result<std::vector<std::string>> ParseScriptDirectives(std::string_view script);

}  // namespace gshare
