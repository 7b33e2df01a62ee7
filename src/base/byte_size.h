// Sizes as people write them in gshare.toml and on the command line: "123" (bytes), "512K",
// "24GiB", "1.5G", "64MB". K/M/G/T and KiB/MiB/GiB/TiB are powers of 1024 (as Slurm's --mem);
// KB/MB/GB/TB are powers of 1000. Case-insensitive suffixes. Pure functions, any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace gshare {

// Bytes written in `text`; an error names what is wrong ("not a size: ...").
Result<uint64_t> ParseByteSize(std::string_view text);

// A size or a percentage ("50%") of `whole` bytes.
Result<uint64_t> ParseByteSizeOrPercent(std::string_view text, uint64_t whole);

// "1.5GiB", "300MiB", "512B": for people, one word (a column or a key=value pair), the one
// size format of every command's output but acct's, which keeps sacct's ("1.50G").
std::string FormatBytes(uint64_t bytes);

}  // namespace gshare
