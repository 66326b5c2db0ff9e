# babelqueue_header_owner(<header> <out-owner> <out-exact>): which component an installed
# header (a path relative to <prefix>/include) belongs to. Used by the partial-install
# ownership check (partial_install.cmake) and by the header check's selection (headers/).
#   babelqueue/export/<c>.hpp             <c>, exact: that component's export macro
#   babelqueue/<file>.hpp, babelqueue/{detail,bindings,typed}/...
#                                         core, exact (typed/ is header-only over core)
#   babelqueue/<folder>/...               <folder>, not exact: the folder of <folder> and of
#                                         every <folder>_* component (idempotency/ holds
#                                         idempotency_sqlite's headers too)
#   anything else                         "" (no component: not a file the install may hold)
function(babelqueue_header_owner header out_owner out_exact)
  set(owner "")
  set(exact TRUE)
  if(header MATCHES "^babelqueue/export/(.+)\\.hpp$")
    set(owner ${CMAKE_MATCH_1})
  elseif(header MATCHES "^babelqueue/(detail|bindings|typed)/" OR
         header MATCHES "^babelqueue/[^/]+\\.hpp$")
    set(owner core)
  elseif(header MATCHES "^babelqueue/([^/]+)/")
    set(owner ${CMAKE_MATCH_1})
    set(exact FALSE)
  endif()
  set(${out_owner} ${owner} PARENT_SCOPE)
  set(${out_exact} ${exact} PARENT_SCOPE)
endfunction()
