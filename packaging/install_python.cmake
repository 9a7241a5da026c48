# Installs the Python package `sightline` (its .py files and the extension) where Debian's
# python3 finds it for the prefix being installed to: /usr (the .deb) -> lib/python3/dist-packages;
# /usr/local -> lib/python3.X/dist-packages; any other prefix (~/.local, a test's folder) ->
# lib/python3.X/site-packages, the user site-packages of ~/.local. Run at install time, so the
# prefix is the one given to `cmake --install --prefix` or to cpack, not the configured one.
# Set by the install(CODE) before it: SIGHTLINE_PYTHON_FILES, SIGHTLINE_PYTHON_VERSION.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(python_dir lib/python3/dist-packages)
elseif(CMAKE_INSTALL_PREFIX STREQUAL "/usr/local")
  set(python_dir lib/python${SIGHTLINE_PYTHON_VERSION}/dist-packages)
else()
  set(python_dir lib/python${SIGHTLINE_PYTHON_VERSION}/site-packages)
endif()
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/${python_dir}/sightline" TYPE FILE FILES ${SIGHTLINE_PYTHON_FILES})
