// gshare's entry point, in the cli layer so that it compiles with the layer's other sources
// (main.cc, the binary's own source, stays a line).
#pragma once

namespace gshare {

// Runs the gshare command line `argv` (argc words); its exit code (cli.h's kExit* values).
// Called once, from main's thread.
int Main(int argc, char** argv);

}  // namespace gshare
