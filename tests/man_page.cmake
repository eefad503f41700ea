# The man page (made by help2man from `bnorm help --all`) exists and covers
# every command and a sample of each command's options.
if(NOT EXISTS "${MAN}")
  message(FATAL_ERROR "no man page at ${MAN}: install help2man (make test does) and build again")
endif()
file(READ "${MAN}" page)
foreach(want ".TH BNORM \"1\"" "inspect" "fold" "eval" "upgrade" "\\-\\-verify" "\\-\\-fuse\\-norms" "\\-\\-compare"
        "\\-\\-fp16" "\\-\\-color")
  string(FIND "${page}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the man page ${MAN} lacks '${want}'")
  endif()
endforeach()
message(STATUS "the man page names every command")
