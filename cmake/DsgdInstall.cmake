# Where the binaries and the data files they read go, installed and in the build tree, so
# that core/io/data_dir.cpp finds the data next to the running binary (/proc/self/exe):
#   PREFIX/bin/dsgd, PREFIX/bin/dsgd-gui (when built)
#   PREFIX/share/dsgd/lessons/NN-name/   lesson texts (English, Chinese), exercise files
#   PREFIX/share/dsgd/scenarios/*.toml   example scenarios (--scenario NAME)
#   PREFIX/share/dsgd/include/core/      headers `dsgd lesson 5 --check` compiles against
# The build tree holds the same share/dsgd as links into the source tree, so
# build/default/dsgd, build/default/gui/dsgd-gui and the tests read the files being edited.
set(DSGD_DATA_DIR share/dsgd)

set(_dsgd_build_data ${PROJECT_BINARY_DIR}/${DSGD_DATA_DIR})
file(MAKE_DIRECTORY ${_dsgd_build_data}/include)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/lessons ${_dsgd_build_data}/lessons SYMBOLIC)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/assets/scenarios ${_dsgd_build_data}/scenarios SYMBOLIC)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/core ${_dsgd_build_data}/include/core SYMBOLIC)

# The CUDA libraries (and any other outside the system's paths) stay found once installed.
set_target_properties(dsgd PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS dsgd RUNTIME DESTINATION bin)
if(TARGET dsgd-gui)
  set_target_properties(dsgd-gui PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS dsgd-gui RUNTIME DESTINATION bin)
endif()
file(GLOB _dsgd_lesson_dirs LIST_DIRECTORIES true ${PROJECT_SOURCE_DIR}/lessons/[0-9][0-9]-*)
install(DIRECTORY ${_dsgd_lesson_dirs} DESTINATION ${DSGD_DATA_DIR}/lessons)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/scenarios/ DESTINATION ${DSGD_DATA_DIR}/scenarios
        FILES_MATCHING PATTERN "*.toml")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/ DESTINATION ${DSGD_DATA_DIR}/include/core
        FILES_MATCHING PATTERN "*.h")
