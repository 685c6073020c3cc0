/* SPDX-License-Identifier: MIT */
// cxx_map: the C++ workload of tests/bench-real.sh.  THREADS threads each
// build a std::map<int, std::string> of N entries (strings of 8..72 bytes,
// so both the node and the string body are heap blocks), then erase every
// other entry and insert half as many again, and all threads also touch
// one map shared under a mutex, as a program with a shared cache would.
// Prints a checksum so that the work cannot be optimized away and a
// debugger that corrupts data shows it.
//
//   cxx_map [N per thread] [THREADS]      default 40000 4
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

static std::map<int, std::string> shared_map;
static std::mutex shared_lock;

static unsigned long work(int id, int n)
{
	std::map<int, std::string> own;
	unsigned long sum = 0;
	unsigned int x = 12345u + id;

	for (int i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		own[static_cast<int>(x >> 1)] = std::string(8 + x % 65, static_cast<char>('a' + i % 26));
		if (i % 16 == 0) {
			std::lock_guard<std::mutex> g(shared_lock);
			shared_map[i * 4 + id] = std::string(24 + i % 40, 'x');
		}
	}
	bool drop = false;
	for (auto it = own.begin(); it != own.end();) {
		if (drop)
			it = own.erase(it);
		else
			++it;
		drop = !drop;
	}
	for (int i = 0; i < n / 2; i++) {
		x = x * 1103515245u + 12345u;
		own.emplace(static_cast<int>(x >> 1), std::string(16 + x % 48, 'y'));
	}
	for (const auto &kv : own)
		sum += kv.second.size() + static_cast<unsigned int>(kv.first);
	return sum;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 40000;
	int threads = argc > 2 ? std::atoi(argv[2]) : 4;
	std::vector<std::thread> pool;
	std::vector<unsigned long> sums(threads);

	for (int t = 0; t < threads; t++)
		pool.emplace_back([t, n, &sums] { sums[t] = work(t, n); });
	for (auto &th : pool)
		th.join();
	unsigned long total = shared_map.size();
	for (unsigned long s : sums)
		total += s;
	std::printf("%lu\n", total);
	return 0;
}
