// An import cycle is a static error: stations.hql imports readings.hql,
// which imports stations.hql back. Nothing runs (exit 2).
import "readings.hql"

type Station : Data = {
    code: String
}
