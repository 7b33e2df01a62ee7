// spdlog's compiled part, built once: every unit includes spdlog in its compiled-library mode
// (SPDLOG_COMPILED_LIB, src/CMakeLists.txt), so none of them compiles spdlog's implementation
// again (about 10 s a unit under the sanitizers). The binary still needs no spdlog library.
// The explicit instantiations are the sink templates SetupLogging (base/logging.cc) uses and
// the registry's default logger (a colour console sink) before it;
// spdlog's documentation, "Compiled version", describes the mode.
#ifndef SPDLOG_COMPILED_LIB
#error "spdlog_library.cc is built with SPDLOG_COMPILED_LIB"
#endif

#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

#include <mutex>

template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>;
template class spdlog::sinks::stderr_sink<spdlog::details::console_mutex>;
template std::shared_ptr<spdlog::logger> spdlog::stderr_logger_mt<spdlog::synchronous_factory>(
    const std::string& logger_name);
