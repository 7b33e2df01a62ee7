// Typed, bounded values read out of a parsed gshare.toml (toml++ nodes), for base/config.cc.
// Every error is one line: "path:line:col: table.key: what is wrong", naming the allowed
// values or range. Pure functions of their arguments: any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "base/status.h"

namespace gshare::toml_values {

// "path:line:col" of `region` in the file at `path`, or just "path" when toml++ kept no
// position.
std::string Where(const std::string& path, const toml::source_region& region);

// The error "path:line:col: key: problem" for the value `node`.
Status ValueError(const std::string& path, const toml::node& node, std::string_view key,
                  std::string_view problem);

// The error for an unknown `key` of `table` ("" for the top level), listing the known ones.
Status UnknownKey(const std::string& path, const toml::key& key, std::string_view table,
                  std::string_view known);

Status ReadBool(const std::string& path, const toml::node& node, std::string_view key, bool* out);
Status ReadString(const std::string& path, const toml::node& node, std::string_view key,
                  std::string* out);

// A duration string (base/duration.h), more than 0 when `positive`.
Status ReadDuration(const std::string& path, const toml::node& node, std::string_view key,
                    bool positive, std::chrono::milliseconds* out);

// A duration string within [min, max]; the error names both ("must be from 20ms to 1d").
Status ReadDurationWithin(const std::string& path, const toml::node& node, std::string_view key,
                          std::chrono::milliseconds min, std::chrono::milliseconds max,
                          std::chrono::milliseconds* out);

// An integer within [min, max]; the error names both ("expected an integer from 0 to 64").
Status ReadCount(const std::string& path, const toml::node& node, std::string_view key, int min,
                 int max, int* out);

// A job priority (kMinPriority..kMaxPriority of base/config.h).
Status ReadPriority(const std::string& path, const toml::node& node, std::string_view key,
                    int* out);

// A size string such as "24GiB" (base/byte_size.h).
Status ReadSize(const std::string& path, const toml::node& node, std::string_view key,
                uint64_t* out);

}  // namespace gshare::toml_values
