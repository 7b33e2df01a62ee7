// PrometheusText: builds one exposition in Prometheus's text format 0.0.4 (the format every
// Prometheus server and node_exporter's textfile collector read): a family's "# HELP" and
// "# TYPE" lines, then its samples, label values escaped. Pure; one instance per thread.
// Names are the caller's constants and are not checked; label values and help may be any text
// (job names are user input).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gshare {

class PrometheusText {
 public:
  enum class Type { kGauge, kCounter };
  using Labels = std::vector<std::pair<std::string_view, std::string>>;

  // Starts family `name`: its HELP and TYPE lines. Its samples follow, before the next
  // family; a family without samples is valid (the series exist only while there is data).
  void Family(std::string_view name, Type type, std::string_view help);
  // One sample of the current family: name{labels} value. A counter's name must end in
  // "_total" (the caller's name; the format's convention).
  void Sample(std::string_view name, const Labels& labels, double value);
  void Sample(std::string_view name, double value) { Sample(name, {}, value); }

  const std::string& text() const { return text_; }
  std::string Take() { return std::move(text_); }

  // A label value as the format writes it between quotes: backslash, double quote and line
  // feed escaped (\\, \", \n); bytes that are not UTF-8 replaced by U+FFFD, so a job name
  // cannot make the exposition unreadable.
  static std::string EscapeLabelValue(std::string_view value);
  // Help text: backslash and line feed escaped.
  static std::string EscapeHelp(std::string_view help);
  // A sample value: integers without a fraction, NaN, +Inf, -Inf as the format spells them,
  // others with the digits that read back as the same double.
  static std::string FormatValue(double value);

 private:
  std::string text_;
};

}  // namespace gshare
