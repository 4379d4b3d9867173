// One process-wide pool of std::threads (host only; not used by device code).
//
// parallel_for(n, f) runs f(0..n-1) on the pool *and* on the calling thread, and returns when all
// are done. Because the caller always takes part, a job finishes even if every worker is busy
// with another caller's job (several async N-API calls may run at once) or the pool is being
// resized; nested parallel_for calls cannot deadlock for the same reason.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads) { start(threads); }
  ~ThreadPool() { stop(); }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Number of threads that compute a job: the workers plus the calling thread.
  unsigned size() const { return size_.load(); }

  void resize(unsigned threads) {
    std::lock_guard<std::mutex> g(resize_mutex_);
    stop();
    start(threads);
  }

  template <class Fn>
  void parallel_for(size_t n, Fn&& fn) {
    if (n == 0) return;
    if (n == 1 || size_.load() <= 1) {
      for (size_t i = 0; i < n; i++) fn(i);
      return;
    }
    auto job = std::make_shared<Job>();
    job->n = n;
    job->fn = [&fn](size_t i) { fn(i); };
    {
      std::lock_guard<std::mutex> g(mutex_);
      queue_.push_back(job);
    }
    cv_.notify_all();
    run(job);
    std::unique_lock<std::mutex> lk(job->mutex);
    job->cv.wait(lk, [&] { return job->done.load() == job->n; });
    if (job->error) std::rethrow_exception(job->error);
  }

  static unsigned default_threads() {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : n;
  }

 private:
  struct Job {
    std::function<void(size_t)> fn;
    size_t n = 0;
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    std::mutex mutex;
    std::condition_variable cv;
    std::exception_ptr error;
  };

  void run(const std::shared_ptr<Job>& job) {
    for (;;) {
      const size_t i = job->next.fetch_add(1);
      if (i >= job->n) break;
      try {
        job->fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> g(job->mutex);
        if (!job->error) job->error = std::current_exception();
      }
      if (job->done.fetch_add(1) + 1 == job->n) {
        std::lock_guard<std::mutex> g(job->mutex);
        job->cv.notify_all();
      }
    }
    std::lock_guard<std::mutex> g(mutex_);
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (*it == job) {
        queue_.erase(it);
        break;
      }
    }
  }

  void worker() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lk(mutex_);
        cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        job = queue_.front();
      }
      run(job);
    }
  }

  void start(unsigned threads) {
    if (threads == 0) threads = 1;
    {
      std::lock_guard<std::mutex> g(mutex_);
      stopping_ = false;
    }
    for (unsigned i = 1; i < threads; i++) workers_.emplace_back([this] { worker(); });
    size_.store(threads);
  }

  void stop() {
    {
      std::lock_guard<std::mutex> g(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
    size_.store(1);
  }

  std::mutex mutex_;
  std::mutex resize_mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<std::thread> workers_;
  std::atomic<unsigned> size_{1};
  bool stopping_ = false;
};

// The process-wide pool (never destroyed: threads die with the process, so exit never waits on
// a job that an async call left running).
inline ThreadPool& pool() {
  static ThreadPool* p = new ThreadPool(ThreadPool::default_threads());
  return *p;
}

// Splits [0, n) into `parts` near-equal ranges; range i is [begin, end).
inline void split_range(size_t n, size_t parts, size_t i, size_t& begin, size_t& end) {
  const size_t q = n / parts, r = n % parts;
  begin = i * q + (i < r ? i : r);
  end = begin + q + (i < r ? 1 : 0);
}

}  // namespace kiln
