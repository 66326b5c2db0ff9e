#pragma once
// Every transport this build has, by the BQ_HAVE_<SCHEME> macros the test's CMakeLists sets
// for the components it links: their headers, and one call that registers their schemes
// (url.hpp's registry), for the executables that open any URL (the contract suite, the
// crash matrix and its worker).
#ifdef BQ_HAVE_SQLITE
#include <babelqueue/sqlite/sqlite_transport.hpp>
#endif
#ifdef BQ_HAVE_REDIS
#include <babelqueue/redis/redis_transport.hpp>
#endif
#ifdef BQ_HAVE_RABBITMQ
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>
#endif
#ifdef BQ_HAVE_KAFKA
#include <babelqueue/kafka/kafka_transport.hpp>
#endif
#ifdef BQ_HAVE_ARTEMIS
#include <babelqueue/artemis/artemis_transport.hpp>
#endif
#ifdef BQ_HAVE_ASB
#include <babelqueue/asb/asb_transport.hpp>
#endif
#ifdef BQ_HAVE_SQS
#include <babelqueue/sqs/sqs_transport.hpp>
#endif
#ifdef BQ_HAVE_PULSAR
#include <babelqueue/pulsar/pulsar_transport.hpp>
#endif

namespace bqtest {

/// Registers the scheme of every transport named by a BQ_HAVE_<SCHEME> macro. Idempotent.
inline void register_all_transports() {
#ifdef BQ_HAVE_SQLITE
  babelqueue::sqlite::register_transport();
#endif
#ifdef BQ_HAVE_REDIS
  babelqueue::redis::register_transport();
#endif
#ifdef BQ_HAVE_RABBITMQ
  babelqueue::rabbitmq::register_transport();
#endif
#ifdef BQ_HAVE_KAFKA
  babelqueue::kafka::register_transport();
#endif
#ifdef BQ_HAVE_ARTEMIS
  babelqueue::artemis::register_transport();
#endif
#ifdef BQ_HAVE_ASB
  babelqueue::asb::register_transport();
#endif
#ifdef BQ_HAVE_SQS
  babelqueue::sqs::register_transport();
#endif
#ifdef BQ_HAVE_PULSAR
  babelqueue::pulsar::register_transport();
#endif
}

}  // namespace bqtest
