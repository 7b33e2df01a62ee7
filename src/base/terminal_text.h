// Text from job records (names, commands, reasons, paths) made safe for a terminal table:
// control characters are written as visible escapes, so a job name cannot move the cursor,
// recolour the screen or break a row in two. --json output is never escaped. Pure; any thread.
#pragma once

#include <string>
#include <string_view>

namespace gshare {

// `text` with every C0 control character, DEL and C1 control (U+0080..U+009F in UTF-8)
// escaped: \n \r \t \e as such, others as \xHH (C1: \u00HH), and a backslash doubled so the
// escapes cannot be forged. Other bytes, invalid UTF-8 included, are kept.
std::string TerminalText(std::string_view text);

}  // namespace gshare
