#include "interrupts.h"

#include <pthread.h>
#include <signal.h>

#include <thread>

#include "model/output_file.h"

namespace bnorm::cli {

void handle_interrupts(std::function<void()> before_death) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaddset(&set, sig);
  }
  // Blocked here, so in every thread started from now on (OpenMP's too).
  if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return;
  std::thread([set, before_death = std::move(before_death)]() {
    int sig = 0;
    while (::sigwait(&set, &sig) != 0) {
    }
    remove_unfinished_outputs();  // and nothing is named after it
    if (before_death) before_death();
    ::signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    ::raise(sig);
  }).detach();
}

}  // namespace bnorm::cli
