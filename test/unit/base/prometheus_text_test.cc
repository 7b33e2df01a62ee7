// Issue 24 (metrics): the text format's HELP/TYPE lines, escaping and numbers.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "base/prometheus_text.h"

namespace gshare::unit_prometheus_text {

TEST_CASE("a family is its HELP and TYPE lines, then its samples") {
  PrometheusText t;
  t.Family("gshare_x_seconds_total", PrometheusText::Type::kCounter, "Seconds of x.\nMore \\ so.");
  t.Sample("gshare_x_seconds_total", {{"gpu", "0"}, {"uuid", "GPU-1"}}, 2.5);
  t.Family("gshare_up", PrometheusText::Type::kGauge, "Up.");
  t.Sample("gshare_up", 1);
  CHECK(t.text() ==
        "# HELP gshare_x_seconds_total Seconds of x.\\nMore \\\\ so.\n"
        "# TYPE gshare_x_seconds_total counter\n"
        "gshare_x_seconds_total{gpu=\"0\",uuid=\"GPU-1\"} 2.5\n"
        "# HELP gshare_up Up.\n"
        "# TYPE gshare_up gauge\n"
        "gshare_up 1\n");
}

TEST_CASE("label values escape quotes, backslashes and newlines; not UTF-8 is replaced") {
  CHECK(PrometheusText::EscapeLabelValue("lr=0.001 \"best\"") == "lr=0.001 \\\"best\\\"");
  CHECK(PrometheusText::EscapeLabelValue("a\\b\nc") == "a\\\\b\\nc");
  CHECK(PrometheusText::EscapeLabelValue("ünï ✓ 𝛼") == "ünï ✓ 𝛼");
  CHECK(PrometheusText::EscapeLabelValue("x\xff") == "x\xEF\xBF\xBD");
  CHECK(PrometheusText::EscapeLabelValue("\xc0\xaf") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  CHECK(PrometheusText::EscapeLabelValue("\xed\xa0\x80") ==
        "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");                                      // surrogate
  CHECK(PrometheusText::EscapeLabelValue("\xe2\x9c") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // cut
  PrometheusText t;
  t.Sample("m", {{"name", "x\"}\n# TYPE m counter"}}, 1);
  // One line: the name cannot end the label set or start a line of its own.
  CHECK(t.text() == "m{name=\"x\\\"}\\n# TYPE m counter\"} 1\n");
}

TEST_CASE("sample values as the format spells them") {
  CHECK(PrometheusText::FormatValue(0) == "0");
  CHECK(PrometheusText::FormatValue(12345678901234) == "12345678901234");
  CHECK(PrometheusText::FormatValue(0.25) == "0.25");
  CHECK(PrometheusText::FormatValue(1.0 / 3) == "0.3333333333333333");
  CHECK(PrometheusText::FormatValue(std::nan("")) == "NaN");
  CHECK(PrometheusText::FormatValue(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(PrometheusText::FormatValue(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(std::stod(PrometheusText::FormatValue(1e300)) == 1e300);
}

}  // namespace gshare::unit_prometheus_text
