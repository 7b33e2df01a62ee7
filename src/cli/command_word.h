// What a mistyped command line meant: the command word of gshare's argv, and the nearest of
// the known words to one it does not know (as git and cargo suggest: "did you mean"). Pure;
// any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gshare {

// The optimal string alignment distance (Levenshtein with adjacent transpositions, each edit
// costing 1): "stauts" is 1 from "status", "qeue" 1 from "queue".
int EditDistance(const std::string& a, const std::string& b);

// The candidate nearest to `word`: within 2 edits (1 for words of up to 4 letters), or the only
// candidate that `word` is a prefix of; nullopt when none is that near, or two are equally.
std::optional<std::string> NearestWord(const std::string& word,
                                       const std::vector<std::string>& candidates);

// gshare's top level: the index in argv of the command word (the first argument that is
// not a top-level option; --config takes the next one), or -1 when there is none. Options
// that come before it, other than --config, -v/--verbose, --version and -h/--help, go to
// *unknown_options.
int CommandWordIndex(int argc, const char* const* argv, std::vector<std::string>* unknown_options);

}  // namespace gshare
