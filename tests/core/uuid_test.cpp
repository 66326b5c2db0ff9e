#include <babelqueue/uuid.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <thread>

using namespace babelqueue;

TEST(Uuid, Version4LowercaseLayout) {
  for (int i = 0; i < 1000; ++i) {
    std::string u = uuid_v4();
    ASSERT_EQ(u.size(), 36u);
    ASSERT_TRUE(is_uuid(u));
    EXPECT_EQ(u[14], '4');
    EXPECT_TRUE(u[19] == '8' || u[19] == '9' || u[19] == 'a' || u[19] == 'b') << u;
    for (char c : u) EXPECT_FALSE(c >= 'A' && c <= 'F');
  }
}

TEST(Uuid, UniqueAcrossThreads) {
  std::set<std::string> all;
  std::mutex m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::vector<std::string> mine;
      for (int i = 0; i < 5000; ++i) mine.push_back(uuid_v4());
      std::lock_guard lock(m);
      all.insert(mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(all.size(), 20000u);
}

TEST(Uuid, ForkedChildDoesNotRepeatParentBytes) {
  (void)uuid_v4();  // fill the parent's buffer
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    std::string u = uuid_v4();
    ssize_t n = write(fds[1], u.data(), u.size());
    _exit(n == 36 ? 0 : 1);
  }
  std::string parent = uuid_v4();
  char buf[36];
  ASSERT_EQ(read(fds[0], buf, 36), 36);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_NE(std::string(buf, 36), parent);
  close(fds[0]);
  close(fds[1]);
}

TEST(Uuid, IsUuid) {
  EXPECT_TRUE(is_uuid("7B3F9C2A-E41D-4F88-9B2A-1C0D5E6F7A8B"));
  EXPECT_FALSE(is_uuid("7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8"));
  EXPECT_FALSE(is_uuid("7b3f9c2a_e41d-4f88-9b2a-1c0d5e6f7a8b"));
  EXPECT_FALSE(is_uuid("7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8g"));
}
