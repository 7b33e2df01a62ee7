// The gshare binary: the command line is the cli layer's (cli/entry.h).
#include "cli/entry.h"

int main(int argc, char** argv) { return gshare::Main(argc, argv); }
