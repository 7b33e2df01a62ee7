#include "base/toml_values.h"

#include "base/byte_size.h"
#include "base/config.h"
#include "base/duration.h"

namespace gshare::toml_values {

std::string Where(const std::string& path, const toml::source_region& region) {
  if (region.begin.line == 0) return path;
  return path + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

Status ValueError(const std::string& path, const toml::node& node, std::string_view key,
                  std::string_view problem) {
  return Status::Error(Where(path, node.source()) + ": " + std::string(key) + ": " +
                       std::string(problem));
}

Status UnknownKey(const std::string& path, const toml::key& key, std::string_view table,
                  std::string_view known) {
  std::string name =
      table.empty() ? std::string(key.str()) : std::string(table) + "." + std::string(key.str());
  return Status::Error(Where(path, key.source()) + ": unknown key \"" + name +
                       "\" (known: " + std::string(known) + ")");
}

Status ReadBool(const std::string& path, const toml::node& node, std::string_view key, bool* out) {
  const toml::value<bool>* v = node.as_boolean();
  if (v == nullptr) return ValueError(path, node, key, "expected true or false");
  *out = v->get();
  return Status::Ok();
}

Status ReadString(const std::string& path, const toml::node& node, std::string_view key,
                  std::string* out) {
  const toml::value<std::string>* v = node.as_string();
  if (v == nullptr) return ValueError(path, node, key, "expected a string");
  *out = v->get();
  return Status::Ok();
}

Status ReadDuration(const std::string& path, const toml::node& node, std::string_view key,
                    bool positive, std::chrono::milliseconds* out) {
  const toml::value<std::string>* v = node.as_string();
  if (v == nullptr)
    return ValueError(path, node, key, "expected a duration string such as \"20s\"");
  Result<std::chrono::milliseconds> d = ParseDuration(v->get());
  if (!d.ok()) return ValueError(path, node, key, d.status().message());
  if (positive && d.value().count() == 0) return ValueError(path, node, key, "must be more than 0");
  *out = d.value();
  return Status::Ok();
}

Status ReadDurationWithin(const std::string& path, const toml::node& node, std::string_view key,
                          std::chrono::milliseconds min, std::chrono::milliseconds max,
                          std::chrono::milliseconds* out) {
  std::chrono::milliseconds d{0};
  if (Status st = ReadDuration(path, node, key, /*positive=*/false, &d); !st.ok()) return st;
  if (d < min || d > max) {
    return ValueError(path, node, key,
                      "\"" + node.as_string()->get() + "\" is out of range: must be from " +
                          FormatDuration(min) + " to " + FormatDuration(max));
  }
  *out = d;
  return Status::Ok();
}

Status ReadCount(const std::string& path, const toml::node& node, std::string_view key, int min,
                 int max, int* out) {
  const toml::value<int64_t>* v = node.as_integer();
  if (v == nullptr || v->get() < min || v->get() > max) {
    return ValueError(
        path, node, key,
        "expected an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  *out = static_cast<int>(v->get());
  return Status::Ok();
}

Status ReadPriority(const std::string& path, const toml::node& node, std::string_view key,
                    int* out) {
  return ReadCount(path, node, key, kMinPriority, kMaxPriority, out);
}

Status ReadSize(const std::string& path, const toml::node& node, std::string_view key,
                uint64_t* out) {
  const toml::value<std::string>* v = node.as_string();
  if (v == nullptr) return ValueError(path, node, key, "expected a size string such as \"24GiB\"");
  Result<uint64_t> n = ParseByteSize(v->get());
  if (!n.ok()) return ValueError(path, node, key, n.status().message());
  *out = n.value();
  return Status::Ok();
}

}  // namespace gshare::toml_values
