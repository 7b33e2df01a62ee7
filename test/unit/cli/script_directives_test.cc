#include "cli/script_directives.h"

#include <doctest/doctest.h>

namespace gshare::unit_script_directives {
namespace {

using Words = std::vector<std::string>;

Words Parse(std::string_view script) {
  Result<Words> words = ParseScriptDirectives(script);
  INFO(script, ": ", words.status().message());
  REQUIRE(words.ok());
  return words.value();
}

std::string ErrorOf(std::string_view script) {
  Result<Words> words = ParseScriptDirectives(script);
  INFO(script);
  REQUIRE_FALSE(words.ok());
  return words.status().message();
}

TEST_CASE("ParseScriptDirectives reads #GSHARE lines before the first command") {
  CHECK(Parse("#!/bin/bash\n"
              "#GSHARE -J train\n"
              "#GSHARE --time 1:00:00 -p 5\n"
              "\n"
              "# a comment\n"
              "   # an indented comment\n"
              "#GSHARE --after 3\n"
              "python train.py\n"
              "#GSHARE --gpu 1\n") ==
        Words{"-J", "train", "--time", "1:00:00", "-p", "5", "--after", "3"});
  CHECK(Parse("") == Words{});
  CHECK(Parse("echo hi\n#GSHARE -J late\n") == Words{});
  CHECK(Parse("#GSHARE -J last") == Words{"-J", "last"});  // no final newline
  CHECK(Parse("#GSHARE\t-J\ttab\n") == Words{"-J", "tab"});
  CHECK(Parse("#GSHARE\n#GSHARE   \n") == Words{});
}

TEST_CASE("ParseScriptDirectives stops at the first command, even an indented one") {
  CHECK(Parse("#GSHARE -J a\n  true\n#GSHARE -J b\n") == Words{"-J", "a"});
  CHECK(Parse("\t\n#GSHARE -J a\n") == Words{"-J", "a"});  // a blank line is no command
}

TEST_CASE("ParseScriptDirectives ignores look-alike comments") {
  CHECK(Parse("#GSHAREX -J a\n# GSHARE -J b\n #GSHARE -J c\n#gshare -J d\n#SBATCH -J e\n") ==
        Words{});
}

TEST_CASE("ParseScriptDirectives splits words as sh does") {
  CHECK(Parse("#GSHARE -J 'my job' --env \"A=b c\"\n") == Words{"-J", "my job", "--env", "A=b c"});
  CHECK(Parse("#GSHARE -J 'a\"b\\c'\n") == Words{"-J", "a\"b\\c"});
  CHECK(Parse("#GSHARE --env \"A=\\\"q\\\" \\\\ \\$HOME \\` \\n\"\n") ==
        Words{"--env", "A=\"q\" \\ $HOME ` \\n"});
  CHECK(Parse("#GSHARE -J my\\ job \\'x\n") == Words{"-J", "my job", "'x"});
  CHECK(Parse("#GSHARE -J a'b c'\"d e\"f\n") == Words{"-J", "ab cd ef"});
  CHECK(Parse("#GSHARE -J '' \"\"\n") == Words{"-J", "", ""});
  CHECK(Parse("#GSHARE --env A=$HOME\n") == Words{"--env", "A=$HOME"});  // no expansion
}

TEST_CASE("ParseScriptDirectives ends a line at a '#' that starts a word") {
  CHECK(Parse("#GSHARE -J a # the name\n") == Words{"-J", "a"});
  CHECK(Parse("#GSHARE #-J a\n") == Words{});
  CHECK(Parse("#GSHARE -J a#b '#c' \\#d\n") == Words{"-J", "a#b", "#c", "#d"});
}

TEST_CASE("ParseScriptDirectives drops a CR before the newline") {
  CHECK(Parse("#!/bin/sh\r\n#GSHARE -J a\r\n\r\necho\r\n") == Words{"-J", "a"});
}

TEST_CASE("ParseScriptDirectives names the line of an unterminated quote") {
  CHECK(ErrorOf("#!/bin/sh\n#GSHARE -J ok\n#GSHARE -J 'oops\n") ==
        "script line 3: unterminated ' quote in #GSHARE directive");
  CHECK(ErrorOf("#GSHARE -J \"oops\n") ==
        "script line 1: unterminated \" quote in #GSHARE directive");
  CHECK(ErrorOf("\n\n#GSHARE -J \"a\\\"\n").find("script line 3: unterminated \"") == 0);
  CHECK(ErrorOf("#GSHARE -J a\\\n--time 5\n") ==
        "script line 1: backslash at end of line in #GSHARE directive");
  // A bad quote after the first command is not read at all.
  CHECK(Parse("echo\n#GSHARE -J 'oops\n") == Words{});
}

}  // namespace
}  // namespace gshare::unit_script_directives
