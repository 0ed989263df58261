// ibvp-sim started among several processes (mpirun, srun; docs/parallel.md): a scenario a
// split run cannot run is refused before any process claims the output directory, naming
// what to change. (tests/split/split_totals.py runs the accepted ones under mpirun.) The launcher is
// stood in for by its environment (Open MPI's OMPI_COMM_WORLD_SIZE / _RANK), so the test
// needs no mpirun.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Outcome {
  int status = -1;
  std::string output;
};

Outcome run_as_rank(const std::filesystem::path& dir, const std::string& order, int rank) {
  std::ofstream(dir / "split.yaml") << "name: split\nduration: 20us\nevent_order: " << order
                                    << "\ntopology: {generator: fat_tree, k: 4, n: 2}\n"
                                       "traffic: {generator: poisson, load: 0.5, payload_bytes: 256}\n";
  const std::string cmd = "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=" + std::to_string(rank) + " " +
                          std::string(IBVP_BINARY_DIR) + "/ibvp-sim " + (dir / "split.yaml").string() + " --out " +
                          (dir / "out").string() + " --quiet 2>&1";
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) o.output.append(buf.data(), n);
  const int status = pclose(p);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

std::filesystem::path fresh_dir(const char* what) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ibvp-split-" + std::string(what) + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST(SplitRun, IbvpSimUnderMpiWithFifoOrderExitsWith2NamingEventOrderAndWritesNothing) {
  const std::filesystem::path dir = fresh_dir("fifo");
  const Outcome o = run_as_rank(dir, "fifo", 0);
  const bool wrote = std::filesystem::exists(dir / "out");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_NE(o.output.find("split.yaml"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("event_order"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("canonical"), std::string::npos) << o.output;
  EXPECT_FALSE(wrote);
}

TEST(SplitRun, OnlyRankZeroReportsARefusalAndNoRankClaimsTheOutputDirectory) {
  const std::filesystem::path dir = fresh_dir("rank1");
  const Outcome o = run_as_rank(dir, "fifo", 1);
  const bool wrote = std::filesystem::exists(dir / "out");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.output, "");
  EXPECT_FALSE(wrote);
}
