// The command word of a mistyped command line and the nearest known word to suggest.
#include "cli/command_word.h"

#include <doctest/doctest.h>

namespace gshare::unit_command_word {
namespace {

const std::vector<std::string> kWords{"run",     "submit",  "queue", "status", "cancel",
                                      "hold",    "help",    "top",   "acct",   "timeline",
                                      "release", "requeue", "resume"};

TEST_CASE("EditDistance: insertions, deletions, substitutions and adjacent swaps cost one") {
  CHECK(EditDistance("status", "status") == 0);
  CHECK(EditDistance("stauts", "status") == 1);  // a swap
  CHECK(EditDistance("qeue", "queue") == 1);     // a letter left out
  CHECK(EditDistance("sumbit", "submit") == 1);
  CHECK(EditDistance("cancle", "cancel") == 1);
  CHECK(EditDistance("run", "rnu") == 1);
  CHECK(EditDistance("", "top") == 3);
  CHECK(EditDistance("kitten", "sitting") == 3);
}

TEST_CASE("NearestWord: one word near enough, none when far or when two are as near") {
  CHECK(NearestWord("stauts", kWords) == "status");
  CHECK(NearestWord("qeue", kWords) == "queue");
  CHECK(NearestWord("sumbit", kWords) == "submit");
  CHECK(NearestWord("timelin", kWords) == "timeline");
  CHECK(NearestWord("tiemline", kWords) == "timeline");
  CHECK(NearestWord("xyzzy", kWords) == std::nullopt);
  CHECK(NearestWord("stat", kWords) == "status");    // the only one it begins
  CHECK(NearestWord("re", kWords) == std::nullopt);  // release, requeue, resume: no guess
  CHECK(NearestWord("hepl", kWords) == "help");      // short: within one
  CHECK(NearestWord("tp", kWords) == "top");
  CHECK(NearestWord("--hepl", {"--help", "--version", "--config"}) == "--help");
}

TEST_CASE("CommandWordIndex: the first word that is not a top-level option") {
  std::vector<std::string> unknown;
  const char* plain[] = {"gshare", "stauts"};
  CHECK(CommandWordIndex(2, plain, &unknown) == 1);
  const char* config[] = {"gshare", "--config", "queue", "-v", "run", "--", "x"};
  CHECK(CommandWordIndex(7, config, &unknown) == 4);  // "queue" is --config's value
  CHECK(unknown.empty());
  const char* none[] = {"gshare", "-v"};
  CHECK(CommandWordIndex(2, none, &unknown) == -1);
  const char* typo[] = {"gshare", "--hepl"};
  CHECK(CommandWordIndex(2, typo, &unknown) == -1);
  CHECK(unknown == std::vector<std::string>{"--hepl"});
}

}  // namespace
}  // namespace gshare::unit_command_word
