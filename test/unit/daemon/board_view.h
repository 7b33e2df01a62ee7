// The priority board as a shim maps it, for the daemon's unit tests: they set and read the
// busy bits the shims would. Test threads only.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <string>

#include "gshare/priority_board.h"

namespace gshare::unit_board_view {

struct ShimView {
  proto::BoardSlot* board = nullptr;
  explicit ShimView(const std::string& path) {
    int fd = open(path.c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    void* p = mmap(nullptr, proto::kBoardBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    REQUIRE(p != MAP_FAILED);
    board = static_cast<proto::BoardSlot*>(p);
  }
  ~ShimView() { munmap(board, proto::kBoardBytes); }
};

}  // namespace gshare::unit_board_view
