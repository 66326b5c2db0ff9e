// Install-tree consumer of babelqueue::otel: the bijection and the tracing observer from the
// installed package alone (opentelemetry-cpp's API found through the installed config).
// No SDK: the API's no-op provider, so the observer is built and costs nothing.
#include <babelqueue/otel/tracing.hpp>
#include <babelqueue/runtime/app.hpp>

#include <iostream>

int main() {
  namespace otel = babelqueue::otel;
  if (otel::uuid_of(otel::trace_id_of("4BF92F35-77B3-4DA6-A3CE-929D0E0E4736")) !=
      "4bf92f35-77b3-4da6-a3ce-929d0e0e4736") {
    return 1;
  }
  if (otel::uuid_of(otel::otel_trace_id_of("not-a-uuid")) != "2184a32a-3bae-6ad7-56d7-45ec8678ad6a")
    return 1;
  babelqueue::app_options o;
  o.observers.push_back(otel::make_tracing());
  std::cout << "consumer-otel-ok\n";
  return 0;
}
