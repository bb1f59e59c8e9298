// The Go text/template subset upstream's scheduler_perf templates use (operations.go
// getSpecFromTextTemplateFile and getTemplateFuncs): actions {{ .Name }} print a variable
// (the op sets .Index, 0..Count-1, and .Count) and {{ Func a b ... }} call one of AddInt,
// SubtractInt, MultiplyInt, DivideInt, Mod, AddFloat, SubtractFloat, MultiplyFloat,
// DivideFloat on variables and number literals; {{- and -}} trim the adjacent white space
// as in Go. Anything else (pipelines, if / range, other functions) is an error naming the
// file and the action, never passed through unrendered.
#pragma once

#include <map>
#include <string>

#include "api/status.h"

namespace phalanx::perf {

// True when `text` holds an action ("{{"): the template must be rendered per object.
bool IsTemplated(const std::string& text);

// Renders `text` (from file `path`, for errors) with integer variables `vars`
// ({"Index": 3, "Count": 10}). Errors: InvalidArgument "PATH: template: ACTION: ...".
api::StatusOr<std::string> RenderTemplate(const std::string& text, const std::string& path,
                                          const std::map<std::string, double>& vars);

}  // namespace phalanx::perf
