// Install-tree consumer: make -> encode -> decode, then print the URN.
// Only public headers of the installed package are used.
#include <babelqueue/babelqueue.hpp>

#include <iostream>

int main() {
  auto made = babelqueue::make("urn:babel:install:consumer-checked",
                               babelqueue::json{{"order_id", 1042}, {"note", "café"}});
  if (!made) {
    std::cerr << "make: " << made.error().message << '\n';
    return 1;
  }
  auto wire = babelqueue::encode(*made);
  if (!wire) {
    std::cerr << "encode: " << wire.error().message << '\n';
    return 1;
  }
  auto back = babelqueue::decode(*wire);
  if (!back) {
    std::cerr << "decode: " << back.error().reason() << ": " << back.error().message << '\n';
    return 1;
  }
  std::cout << "consumer-ok " << back->urn() << '\n';
  return back->trace_id() == made->trace_id() ? 0 : 1;
}
