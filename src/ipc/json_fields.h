// Typed reads of one field of an untrusted JSON object, for the request and reply structs
// (ipc/requests.h, ipc/replies.h). Never throw; an error names the field. Any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace gshare {

// A JSON integer as int64 (nlohmann stores it as int64 or uint64); nullopt for anything else
// (a bool, a float, a string) and for an unsigned value past INT64_MAX.
std::optional<int64_t> AsInt64(const nlohmann::json& v);
// The field `key` of object `j` as an integer within [lo, hi]: an error naming the field
// when it is missing, not an integer (true, 1.5, "1" are not) or out of range.
Result<int64_t> IntField(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi);
// An optional integer field: absent or null reads as nullopt; otherwise as IntField.
Result<std::optional<int64_t>> OptionalInt(const nlohmann::json& j, const char* key, int64_t lo,
                                           int64_t hi);
// A string field; an error when missing or not a string.
Result<std::string> StringField(const nlohmann::json& j, const char* key);
// A boolean field; an error when missing or not true/false.
Result<bool> BoolField(const nlohmann::json& j, const char* key);
// A list of strings; an error when missing, not a list, or holding anything but strings.
Result<std::vector<std::string>> StringListField(const nlohmann::json& j, const char* key);

}  // namespace gshare
