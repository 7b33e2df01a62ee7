// Child processes of the fake driver's check programs (fake_vmm_check, fake_gpus_check): the
// program runs itself as `self --child ARGS...` with extra environment and talks to it over
// its stdin and stdout. Main thread only.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace fake_check {

struct Child {
  pid_t pid = -1;
  int in = -1;   // the child's stdin; closing it tells a child that holds something to let go
  int out = -1;  // the child's stdout
};

// Starts `self --child args...` with `env` ("K=V") before this process's environment, so env
// wins. Everything the child needs is built before fork: the caller may have stream worker
// threads. pid -1 when the pipes cannot be made.
Child Spawn(const char* self, const std::vector<std::string>& args,
            const std::vector<std::string>& env);

// The child's next line of output, without the newline; "" at the end of its output.
std::string ReadLine(const Child& c);

// Closes the child's stdin, waits for it and prints what it still wrote ("  child: ...").
// Its exit status, or -1.
int Finish(Child& c);

}  // namespace fake_check
