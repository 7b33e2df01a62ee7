#include "check_child.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

namespace fake_check {

Child Spawn(const char* self, const std::vector<std::string>& args,
            const std::vector<std::string>& env) {
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  std::vector<char*> argv = {const_cast<char*>(self), const_cast<char*>("--child")};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int to[2], from[2];
  Child c;
  if (pipe(to) != 0 || pipe(from) != 0) return c;
  std::fflush(stdout);
  c.pid = fork();
  if (c.pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    close(to[0]), close(to[1]), close(from[0]), close(from[1]);
    execve(self, argv.data(), envp.data());
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  c.in = to[1];
  c.out = from[0];
  return c;
}

std::string ReadLine(const Child& c) {
  std::string line;
  char ch;
  while (read(c.out, &ch, 1) == 1 && ch != '\n') line += ch;
  return line;
}

int Finish(Child& c) {
  close(c.in);
  int status = 0;
  const bool waited = waitpid(c.pid, &status, 0) == c.pid;
  std::string rest;
  while (!(rest = ReadLine(c)).empty()) std::printf("  child: %s\n", rest.c_str());
  close(c.out);
  return waited && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace fake_check
