#include "base/terminal_text.h"

#include <doctest/doctest.h>

namespace gshare::unit_terminal_text {

TEST_CASE("table text escapes control characters") {
  CHECK(TerminalText("train-v2 ünï") == "train-v2 ünï");
  CHECK(TerminalText("a\x1b[31mb\nc\td\re") == "a\\e[31mb\\nc\\td\\re");
  CHECK(TerminalText(std::string("x\0y\x7f", 4)) == "x\\x00y\\x7f");
  CHECK(TerminalText("\xc2\x9b"
                     "2J") == "\\u009b2J");  // C1 CSI
  CHECK(TerminalText("back\\slash") == "back\\\\slash");
  CHECK(TerminalText("\xff\xfe") == "\xff\xfe");  // not UTF-8: kept, harmless
}

}  // namespace gshare::unit_terminal_text
