// The other half of the cycle (see stations.hql): run on its own it reports
// the same cycle, seen from this side.
import "stations.hql"

type Reading : Data = {
    station: Station
    value: Float
}
