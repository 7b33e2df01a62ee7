// What the tests of the swap engine's parts share: a part the test frees when it goes out of
// scope (the engine's own live until the process exits, so they have Reset() instead of a
// destructor). Test threads only.
#pragma once

namespace gshare::shim::unit_freed {

template <class Part>
struct Freed : Part {
  ~Freed() { this->Reset(); }
};

}  // namespace gshare::shim::unit_freed
