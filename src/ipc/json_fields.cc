#include "ipc/json_fields.h"

namespace gshare {

using json = nlohmann::json;

std::optional<int64_t> AsInt64(const json& v) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

Result<std::string> StringField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    return Status::Error(std::string("\"") + key + "\" must be a string");
  }
  return it->get<std::string>();
}

Result<bool> BoolField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) {
    return Status::Error(std::string("\"") + key + "\" must be true or false");
  }
  return it->get<bool>();
}

Result<std::vector<std::string>> StringListField(const json& j, const char* key) {
  auto it = j.find(key);
  bool ok = it != j.end() && it->is_array();
  std::vector<std::string> out;
  for (size_t i = 0; ok && i < it->size(); ++i) {
    ok = (*it)[i].is_string();
    if (ok) out.push_back((*it)[i].get<std::string>());
  }
  if (!ok) return Status::Error(std::string("\"") + key + "\" must be a list of strings");
  return out;
}

Result<std::optional<int64_t>> OptionalInt(const json& j, const char* key, int64_t lo, int64_t hi) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<int64_t>();
  Result<int64_t> v = IntField(j, key, lo, hi);
  if (!v.ok()) return v.status();
  return std::optional<int64_t>(v.value());
}

Result<int64_t> IntField(const json& j, const char* key, int64_t lo, int64_t hi) {
  auto it = j.find(key);
  std::optional<int64_t> v = it == j.end() ? std::nullopt : AsInt64(*it);
  if (!v || *v < lo || *v > hi) {
    return Status::Error(std::string("\"") + key + "\" must be an integer within [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return *v;
}

}  // namespace gshare
