// The installed library and its installed headers agree on the version, and both are the
// version project(VERSION) gave (passed on the command line by partial_install.cmake).
#include <babelqueue/version.hpp>

#include <iostream>
#include <string_view>

int main(int argc, char** argv) {
  std::string_view expected = argc > 1 ? argv[1] : "";
  std::string_view linked = babelqueue::library_version();
  std::cout << "headers " << babelqueue::version_string << ", library " << linked << '\n';
  return linked == babelqueue::version_string && linked == expected ? 0 : 1;
}
